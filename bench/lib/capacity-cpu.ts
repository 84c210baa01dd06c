// CPU seconds of every process of a topology on one machine (Linux /proc), by role: each service
// replica by its pid, and Postgres, NATS, HAProxy, Patroni and etcd by the topology's folder in
// their command lines. A process counts with everything below it, those of its children that
// ended too (Postgres's backends come and go).
import { readFileSync } from 'node:fs';
import { processStats, type ProcessStat as Proc } from './cpu.ts';

/** CPU seconds so far of each process tree: a root and all its descendants, living or reaped. */
function treeSeconds(all: Proc[], roots: number[]): number {
  const children = new Map<number, Proc[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const byPid = new Map(all.map((p) => [p.pid, p]));
  let total = 0;
  const visit = (p: Proc) => {
    total += p.seconds + p.children;
    for (const c of children.get(p.pid) ?? []) visit(c);
  };
  for (const root of roots) {
    const p = byPid.get(root);
    if (p) visit(p);
  }
  return total;
}

export type TopologyProcesses = {
  /** The topology's folder, as its processes name it in their command lines. */
  dir: string;
  /** The service replicas by name (management-0, data-1, …) and pid. */
  replicas: Record<string, number>;
};

/**
 * CPU seconds so far by role: each replica; `postgres` (both Patroni nodes' servers and backends);
 * `nats-<i>` per server; `haproxy (services)` and `haproxy (postgres)`; `patroni and etcd`.
 */
export function topologyCpu({ dir, replicas }: TopologyProcesses): Record<string, number> {
  const all = processStats();
  const mine = all.filter((p) => p.command.includes(dir));
  // The roots of a role: its processes whose parent is not of the same role.
  const rootsOf = (match: (p: Proc) => boolean) => {
    const pids = new Set(mine.filter(match).map((p) => p.pid));
    return [...pids].filter((pid) => !pids.has(all.find((p) => p.pid === pid)!.ppid));
  };
  const figures: Record<string, number> = {};
  for (const [name, pid] of Object.entries(replicas)) figures[name] = treeSeconds(all, [pid]);
  figures.postgres = treeSeconds(
    all,
    rootsOf((p) => /(^|\/)postgres /.test(p.command) && !/patroni/.test(p.command.split(' ')[0]!)),
  );
  const nats = mine.filter((p) => /nats-server/.test(p.command)).sort((a, b) => a.command.localeCompare(b.command));
  nats.forEach((p, i) => (figures[`nats-${i}`] = treeSeconds(all, [p.pid])));
  const haproxy = mine.filter((p) => /(^|\/)haproxy /.test(p.command));
  figures['haproxy (services)'] = treeSeconds(
    all,
    haproxy.filter((p) => !p.command.includes(`${dir}/patroni`)).map((p) => p.pid),
  );
  figures['haproxy (postgres)'] = treeSeconds(
    all,
    haproxy.filter((p) => p.command.includes(`${dir}/patroni`)).map((p) => p.pid),
  );
  figures['patroni and etcd'] = mine
    .filter((p) => /patroni|etcd/.test(p.command) && !/(^|\/)(postgres|haproxy) /.test(p.command))
    .reduce((sum, p) => sum + p.seconds, 0);
  return figures;
}

/** What each role spent between two readings of topologyCpu. */
export const cpuBetween = (before: Record<string, number>, after: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(after).map(([role, s]) => [role, Math.round((s - (before[role] ?? 0)) * 100) / 100]));

/** Busy and total CPU ticks of the whole machine so far (/proc/stat), everyone's processes included. */
export function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are the time no one ran.
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - v[3]! - v[4]!, total };
}

/** The share of the machine's cores busy between two readings of machineTicks. */
export const machineBusyShare = (before: { busy: number; total: number }, after: { busy: number; total: number }): number =>
  after.total === before.total ? 0 : Math.round(((after.busy - before.busy) / (after.total - before.total)) * 1000) / 1000;

/** The machine's run queue over the last minute: others' work on the same cores shows here. */
export const loadAverage = (): number => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
