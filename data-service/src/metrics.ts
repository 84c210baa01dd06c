import type pg from 'pg';
import { Gauge, Histogram, httpMetrics, sharedRead, type HttpMetrics, type Logger, type Registry } from '@platform/shared';
import type { DuckStore } from './store/duckdb.ts';
import type { OptimizerStats } from './optimizer/solving.ts';
import type { SimulationExecutor } from './workers/simulation-pool.ts';

export type DataMetrics = {
  http: HttpMetrics;
  /** An optimizer solve's time by the status of its answer. */
  solved: (status: string, seconds: number) => void;
  /** Reads the optimizer's queue (and its pool's busy threads, when it has threads) when scraped. */
  watchOptimizer: (stats: () => OptimizerStats, busyThreads?: () => number) => void;
  /** The executor, timing every simulation it runs to its end. */
  timedSimulations: (executor: SimulationExecutor) => SimulationExecutor;
};

/**
 * The data service's metrics in its own registry (docs/adr/0024-observability.md). The Postgres
 * pool and the reference version are read when scraped.
 */
export function dataMetrics(registry: Registry, pool: pg.Pool, duck: DuckStore, logger: Logger): DataMetrics {
  new Gauge({
    name: 'db_pool_connections',
    help: 'Postgres connections of this replica: total open, idle, and callers waiting for one',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
  const referenceVersion = sharedRead(() => duck.use(async ({ version }) => version), logger, 'the reference version');
  new Gauge({
    name: 'reference_data_info',
    help: 'The reference data this replica reads: 1, labelled with its version',
    labelNames: ['version'],
    registers: [registry],
    async collect() {
      const version = await referenceVersion();
      this.reset();
      if (version !== undefined) this.set({ version }, 1);
    },
  });
  const solves = new Histogram({
    name: 'optimizer_solve_duration_seconds',
    help: 'Time of one optimizer solve (the model and HiGHS, without reading facts), by the status of the answer',
    labelNames: ['status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const simulations = new Histogram({
    name: 'simulation_duration_seconds',
    help: 'Time of one future-performance simulation on its thread, by how it ended (done, failed or cancelled)',
    labelNames: ['outcome'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return {
    http: httpMetrics(registry),
    solved: (status, seconds) => solves.observe({ status }, seconds),
    watchOptimizer: (stats, busyThreads) => {
      new Gauge({
        name: 'optimizer_requests_held',
        help: "Optimizer requests this replica holds: solving on a thread, and waiting in the tenants' queues for one",
        labelNames: ['state'],
        registers: [registry],
        collect() {
          const now = stats();
          this.set({ state: 'solving' }, now.running);
          this.set({ state: 'waiting' }, now.waiting);
        },
      });
      if (busyThreads) {
        new Gauge({
          name: 'optimizer_busy_threads',
          help: 'Worker threads of the optimizer solving a request right now',
          registers: [registry],
          collect() {
            this.set(busyThreads());
          },
        });
      }
    },
    timedSimulations: (executor) => ({
      slots: executor.slots,
      close: () => executor.close(),
      start: (input, grid, tenant) => {
        const run = executor.start(input, grid, tenant);
        const stop = simulations.startTimer();
        let cancelled = false;
        run.done.then(
          () => stop({ outcome: 'done' }),
          () => stop({ outcome: cancelled ? 'cancelled' : 'failed' }),
        );
        return {
          done: run.done,
          cancel: (reason) => {
            cancelled = true;
            run.cancel(reason);
          },
        };
      },
    }),
  };
}
