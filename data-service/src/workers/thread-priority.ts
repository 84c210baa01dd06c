import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Sets the calling thread's nice value (docs/adr/0020-optimizer-model.md). On Linux a nice value
 * belongs to each thread, and setpriority given a thread's id changes that thread alone: the id is
 * the last part of /proc/thread-self. Raising one's own nice value needs no privilege. Elsewhere,
 * or where it is refused, the thread keeps its priority: returns whether it was set.
 */
export function setThreadNice(nice: number): boolean {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
