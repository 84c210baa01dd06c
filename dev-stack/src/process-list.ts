// The processes of a running supervisor, read from /proc (Linux, as the README's prerequisites require).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export type ProcessInfo = { pid: number; ppid: number; command: string };

function read(pid: string, what: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${what}`, 'utf8');
  } catch {
    return undefined; // ended meanwhile
  }
}

function info(pid: string): ProcessInfo | undefined {
  const stat = read(pid, 'stat');
  const command = read(pid, 'cmdline');
  if (stat === undefined || command === undefined) return undefined;
  // The command name in parentheses may hold spaces: the fields after it are counted from its end.
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return { pid: Number(pid), ppid, command: command.split('\0').join(' ').trim() };
}

function pids(): string[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name));
}

/** The direct children of `pid` whose command line contains `part`. */
export function childrenOf(pid: number, part: string): ProcessInfo[] {
  return pids()
    .map(info)
    .filter((p): p is ProcessInfo => p !== undefined && p.ppid === pid && p.command.includes(part));
}

/**
 * Every process that belongs to the data folder `dir`: its command line or working directory is in
 * it (Postgres and its backends work in their data folder, nats-server reads its config from it), or
 * it was started with PLATFORM_DATA_DIR=`dir` (the supervisor, the services and their helpers).
 */
export function processesOf(dir: string): ProcessInfo[] {
  return pids().flatMap((pid) => {
    const p = info(pid);
    if (!p || p.pid === process.pid) return [];
    let cwd = '';
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      // not ours to read, or ended
    }
    const environ = read(pid, 'environ')?.split('\0') ?? [];
    const ours = p.command.includes(dir) || cwd === dir || cwd.startsWith(`${dir}/`) || environ.includes(`PLATFORM_DATA_DIR=${dir}`);
    return ours ? [p] : [];
  });
}
