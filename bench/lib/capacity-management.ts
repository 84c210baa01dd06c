// The management service with one replica in rotation against two, all else equal: the same
// HAProxy, Postgres and NATS, the second replica put in `maint` at HAProxy's runtime API for the
// one-replica windows. A closed loop of the Client Middleware's management operations finds what
// each configuration answers at most; windows alternate (one, two, one, two, …) so that the shared
// machine's drift falls on both.
import type { Topology } from '@platform/dev-stack/topology';
import { closedLoop, round } from './harness.ts';
import { cpuBetween, loadAverage, machineBusyShare, machineTicks, topologyCpu } from './capacity-cpu.ts';
import type { Middleware } from './middleware.ts';
import { summarize, type OpFigures, type Recorder } from './open-loop.ts';

export type ManagementWindow = {
  replicas: 1 | 2;
  seconds: number;
  answered_rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  errors_by_outcome: OpFigures['errors_by_outcome'];
  /** HAProxy's new sessions per management replica in the window. */
  sessions: Record<string, number>;
  cpu_seconds: Record<string, number>;
  /** CPU ms per answered request by process. */
  cpu_ms_per_request: Record<string, number>;
  /** The machine's cores busy (everyone's processes), as a share of all of them. */
  machine_busy_share: number;
  load_average_1min: number;
};

export type ManagementFigures = {
  concurrency: number;
  windows: ManagementWindow[];
  median_rps: { one: number; two: number };
  ratio: number;
};

/** The middle value, or the mean of the two middle ones. */
export function middle(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function managementScaling(options: {
  topology: Topology;
  dir: string;
  middleware: Middleware;
  recorder: Recorder;
  rounds: number;
  seconds: number;
  concurrency: number;
  log: (line: string) => void;
}): Promise<ManagementFigures> {
  const { topology, middleware, recorder, seconds, concurrency, log } = options;
  const names = topology.replicas.management.map((r) => r.name);
  const second = names[1]!;
  const replicaPids = () =>
    Object.fromEntries([...topology.replicas.management, ...topology.replicas.data].map((r) => [r.name, r.child().pid!] as [string, number]));
  const sessionsOf = async () =>
    Object.fromEntries((await topology.proxy.serverStats()).filter((s) => s.listener === 'management').map((s) => [s.server, s.sessions]));

  log(`warm-up: ${seconds} s with both management replicas`);
  await closedLoop(concurrency, seconds, (_, i) => middleware.operate(i, recorder.now()));

  const windows: ManagementWindow[] = [];
  for (let round_ = 0; round_ < options.rounds; round_++)
    for (const replicas of [1, 2] as const) {
      await topology.proxy.setServerState('management', second, replicas === 1 ? 'maint' : 'ready');
      await sleep(2000);
      const sessionsBefore = await sessionsOf();
      const cpuBefore = topologyCpu({ dir: options.dir, replicas: replicaPids() });
      const ownBefore = process.cpuUsage();
      const ticksBefore = machineTicks();
      const from = recorder.now();
      await closedLoop(concurrency, seconds, (_, i) => middleware.operate(i, recorder.now()));
      const to = recorder.now();
      const busy = machineBusyShare(ticksBefore, machineTicks());
      const own = process.cpuUsage(ownBefore);
      const cpu = cpuBetween(cpuBefore, topologyCpu({ dir: options.dir, replicas: replicaPids() }));
      cpu['load generator (this process)'] = round((own.user + own.system) / 1e6);
      const sessionsAfter = await sessionsOf();
      const { total } = summarize(recorder, from, to);
      const answered = total.count - total.errors;
      const window: ManagementWindow = {
        replicas,
        seconds: round((to - from) / 1000),
        answered_rps: total.rps,
        p50_ms: total.p50_ms,
        p99_ms: total.p99_ms,
        errors: total.errors,
        errors_by_outcome: total.errors_by_outcome,
        sessions: Object.fromEntries(names.map((n) => [n, (sessionsAfter[n] ?? 0) - (sessionsBefore[n] ?? 0)])),
        cpu_seconds: cpu,
        cpu_ms_per_request: Object.fromEntries(Object.entries(cpu).map(([k, s]) => [k, round((1000 * s) / Math.max(1, answered), 3)])),
        machine_busy_share: busy,
        load_average_1min: loadAverage(),
      };
      log(`${replicas} replica(s): ${window.answered_rps} req/s, p99 ${window.p99_ms} ms, machine busy ${busy}, load ${window.load_average_1min}`);
      windows.push(window);
    }
  await topology.proxy.setServerState('management', second, 'ready');
  const one = middle(windows.filter((w) => w.replicas === 1).map((w) => w.answered_rps));
  const two = middle(windows.filter((w) => w.replicas === 2).map((w) => w.answered_rps));
  return { concurrency, windows, median_rps: { one: round(one), two: round(two) }, ratio: round(two / one, 3) };
}
