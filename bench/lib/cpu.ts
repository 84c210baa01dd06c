// CPU time of the processes a benchmark runs (Linux /proc), to tell where a request's time goes:
// the service, Postgres, the client that loads them.
import { readFileSync, readdirSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/** `seconds`: the process's own CPU (its threads included); `children`: that of its children that ended and were waited for. */
export type ProcessStat = { pid: number; ppid: number; seconds: number; children: number; command: string };

function stat(pid: number): ProcessStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    const ticks = (i: number) => Number(fields[i]) / TICKS_PER_SECOND;
    return { pid, ppid: Number(fields[1]), seconds: ticks(11) + ticks(12), children: ticks(13) + ticks(14), command };
  } catch {
    return undefined;
  }
}

/** Every process of the machine now (one that ends between the listing and the read is left out). */
export const processStats = (): ProcessStat[] =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => stat(Number(name)))
    .filter((s): s is ProcessStat => s !== undefined);

/**
 * CPU seconds used so far by these processes and, for `postgresDir`, by its server and every
 * backend, those that ended too (the server waits for them).
 */
export function cpuSeconds(pids: number[], postgresDir?: string): number {
  const stats = processStats();
  let total = stats.filter((s) => pids.includes(s.pid)).reduce((sum, s) => sum + s.seconds, 0);
  const postmaster = postgresDir ? stats.find((s) => s.command.includes(postgresDir) && /postgres/.test(s.command)) : undefined;
  if (postmaster) {
    total += postmaster.seconds + postmaster.children;
    for (const s of stats) if (s.ppid === postmaster.pid) total += s.seconds;
  }
  return total;
}

/** CPU milliseconds per operation of each process group while `run` ran, and what it returned. */
export async function cpuPerOperation<T extends { operations: number }>(
  groups: Record<string, () => number>,
  run: () => Promise<T>,
): Promise<T & { cpu_ms: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(groups).map(([name, read]) => [name, read()]));
  const result = await run();
  const cpu_ms = Object.fromEntries(
    Object.entries(groups).map(([name, read]) => [name, result.operations > 0 ? Math.round(((read() - before[name]!) * 1e6) / result.operations) / 1000 : 0]),
  );
  return { ...result, cpu_ms };
}
