import assert from 'node:assert/strict';
import { TooManyWaiting } from '../src/domain/errors.ts';
import type { SimulationInput, SimulationOutput } from '../src/simulation/engine.ts';
import type { Grid } from '../src/simulation/grid.ts';
import type { SimulationExecutor } from '../src/workers/simulation-pool.ts';
import { simulationScheduler, type SchedulerOptions } from '../src/workers/simulation-scheduler.ts';
import { SHAPES } from './simulation-cases.ts';

// Which runs the scheduler puts in progress on the threads (docs/adr/0030-monte-carlo-threads.md),
// over an executor that only records what it was given and ends runs when the test says: no
// threads, so every order is exact. With real threads: simulation-threads.test.ts; over HTTP:
// simulation-fairness.test.ts.

type Started = { tenant: string | undefined; seed: number; end: (error?: unknown) => void; cancelled?: unknown };

function recordingExecutor(slots: number) {
  const started: Started[] = [];
  const executor: SimulationExecutor = {
    slots,
    start: (input, _grid, tenant) => {
      let resolve!: (out: SimulationOutput) => void;
      let reject!: (error: unknown) => void;
      const done = new Promise<SimulationOutput>((ok, fail) => {
        resolve = ok;
        reject = fail;
      });
      const entry: Started = {
        tenant,
        seed: input.seed,
        end: (error) => (error === undefined ? resolve({ dates: [], deposits: new Float64Array(), values: new Float64Array() }) : reject(error)),
      };
      started.push(entry);
      return {
        done,
        cancel: (reason) => {
          entry.cancelled = reason;
          reject(reason);
        },
      };
    },
    close: async () => undefined,
  };
  return { executor, started };
}

const input = (seed: number): SimulationInput => ({ ...SHAPES[0]!.input, seed });
const grid = {} as Grid;
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('simulation scheduler: runs in progress on the threads', () => {
  const setup = (slots: number, options?: SchedulerOptions) => {
    const { executor, started } = recordingExecutor(slots);
    const scheduler = simulationScheduler(executor, 4, options);
    const answers = new Map<number, Promise<unknown>>();
    const run = (tenant: string, seed: number, signal = new AbortController().signal) => {
      const answer = scheduler.run(tenant, input(seed), grid, signal).catch((error: unknown) => error);
      answers.set(seed, answer);
      return answer;
    };
    const seeds = () => started.map((s) => s.seed);
    const end = async (seed: number) => {
      started.find((s) => s.seed === seed)!.end();
      await settle();
    };
    return { scheduler, started, run, seeds, end, answers };
  };

  it("starts another tenant's run at once beside a tenant that fills the threads, and that tenant's next run only after a run ends", async () => {
    const { scheduler, started, run, seeds, end } = setup(2);
    for (const seed of [1, 2, 3, 4]) void run('A', seed);
    assert.deepEqual(seeds(), [1, 2], "A's first two runs, one per thread");
    void run('B', 10);
    void run('C', 20);
    assert.deepEqual(seeds(), [1, 2, 10, 20], "B's and C's runs start at once beside A's");
    assert.deepEqual(
      started.map((s) => s.tenant),
      ['A', 'A', 'B', 'C'],
      'the executor shares its threads by tenant',
    );
    void run('D', 30);
    void run('E', 40);
    assert.deepEqual(seeds(), [1, 2, 10, 20], 'at most twice the threads in progress: D and E wait');
    assert.deepEqual(scheduler.stats(), { running: 4, waiting: 4 });

    await end(1);
    assert.deepEqual(seeds(), [1, 2, 10, 20, 30], "D's first run goes before A's third, which waits for fewer runs than threads");
    await end(2);
    assert.deepEqual(seeds(), [1, 2, 10, 20, 30, 40], 'E, which never ran, before A, which ran last');
    await end(10);
    assert.deepEqual(seeds(), [1, 2, 10, 20, 30, 40, 3], 'A has no run in progress any more: its third starts as a first');
    await end(20);
    await end(30);
    assert.deepEqual(seeds(), [1, 2, 10, 20, 30, 40, 3], "A's fourth waits while as many runs as threads are in progress");
    await end(40);
    assert.deepEqual(seeds(), [1, 2, 10, 20, 30, 40, 3, 4]);
    await end(3);
    await end(4);
    assert.deepEqual(scheduler.stats(), { running: 0, waiting: 0 });
  });

  it('under the former rule (sharing: runs) puts at most `slots` runs in progress, without their tenant: a new tenant waits for a whole run', async () => {
    const { started, run, seeds, end } = setup(2, { sharing: 'runs' });
    for (const seed of [1, 2, 3]) void run('A', seed);
    void run('B', 10);
    assert.deepEqual(seeds(), [1, 2]);
    await end(1);
    assert.deepEqual(seeds(), [1, 2, 10]);
    assert.deepEqual(
      started.map((s) => s.tenant),
      [undefined, undefined, undefined],
    );
  });

  it('refuses a run beyond the queue of its tenant with TooManyWaiting, queuing nothing', async () => {
    const { scheduler, run, seeds } = setup(1);
    for (const seed of [1, 2, 3, 4, 5]) void run('A', seed);
    assert.deepEqual(scheduler.stats(), { running: 1, waiting: 4 });
    const refused = await run('A', 6);
    assert.ok(refused instanceof TooManyWaiting, String(refused));
    assert.ok(refused.retryAfterSeconds >= 1);
    assert.deepEqual(scheduler.stats(), { running: 1, waiting: 4 }, 'nothing queued');
    assert.deepEqual(seeds(), [1]);
    void run('B', 10);
    assert.deepEqual(seeds(), [1, 10], "another tenant's run still starts");
  });

  it('cancels the run of a client that left and takes a waiting one out of the queue; the next run starts', async () => {
    const { scheduler, started, run, seeds } = setup(1);
    const running = new AbortController();
    const waiting = new AbortController();
    const first = run('A', 1, running.signal);
    const second = run('A', 2, waiting.signal);
    assert.deepEqual(scheduler.stats(), { running: 1, waiting: 1 });
    waiting.abort(new Error('left while waiting'));
    assert.equal(((await second) as Error).message, 'left while waiting');
    assert.deepEqual(scheduler.stats(), { running: 1, waiting: 0 });
    void run('A', 3);
    running.abort(new Error('left while running'));
    assert.equal(((await first) as Error).message, 'left while running');
    assert.equal((started[0]!.cancelled as Error).message, 'left while running');
    await settle();
    assert.deepEqual(seeds(), [1, 3], 'the cancelled run is never started, the next one is');
  });
});
