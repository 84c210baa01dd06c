import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDay } from '../src/simulation/dates.ts';
import { simulate, type SimulationInput } from '../src/simulation/engine.ts';
import { buildGrid } from '../src/simulation/grid.ts';
import { simulationPool, type SimulationPool } from '../src/workers/simulation-pool.ts';
import { SHAPES } from './simulation-cases.ts';

// The worker threads of the data service's simulations (docs/adr/0030-monte-carlo-threads.md): the
// same bytes as the engine in process on 1, 2 and 3 threads, runs sharing the threads unit by
// unit, cancellation and failure. Orders of completion and the pool's own counts are asserted,
// never durations. Over HTTP: simulation-http.test.ts and simulation-fairness.test.ts.

const bytes = (a?: Float64Array) => (a ? Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex') : undefined);
const day = (text: string) => parseDay(text)!;

/** 10,000 scenarios × `years` of daily steps × 2 classes (about 0.14 s of one thread a year here). */
const large = (years: number, scenarios = 10_000): SimulationInput => ({
  ...SHAPES[0]!.input,
  endDay: day(`${2022 + years}-01-31`),
  sampleFrequency: 'D',
  scenarios,
  seed: 3,
});
const TINY: SimulationInput = { ...SHAPES[0]!.input, scenarios: 100 };

describe('simulations on worker threads', function () {
  this.timeout(120_000);
  const pools: SimulationPool[] = [];
  const pool = (threads: number) => {
    const created = simulationPool(threads);
    pools.push(created);
    return created;
  };
  after(() => Promise.all(pools.map((p) => p.close())));

  /** Polls until `condition` holds. */
  const until = async (condition: () => boolean, what: string) => {
    const deadline = Date.now() + 20_000;
    while (!condition()) {
      if (Date.now() > deadline) assert.fail(what);
      await sleep(5);
    }
  };

  it('answers the same bytes as simulate() in process, on 1, 2 and 3 threads, for every shape', async () => {
    const threads = [pool(1), pool(2), pool(3)];
    for (const { name, input } of SHAPES) {
      const grid = buildGrid(input);
      const expected = simulate(input, grid);
      const outs = await Promise.all(threads.map((p) => p.start(input, grid).done));
      outs.forEach((out, i) => {
        assert.equal(bytes(out.values), bytes(expected.values), `${name}: ${i + 1} threads`);
        assert.equal(bytes(out.paths), bytes(expected.paths), `${name}: ${i + 1} threads, paths`);
        assert.deepEqual(out.dates, expected.dates);
        assert.deepEqual(out.deposits, expected.deposits);
      });
    }
  });

  it('answers each of several runs at once with its own bytes while they share the threads', async () => {
    const shared = pool(2);
    const runs = SHAPES.map(({ input }) => shared.start(input, buildGrid(input)).done);
    const outs = await Promise.all(runs);
    SHAPES.forEach(({ name, input }, i) => assert.equal(bytes(outs[i]!.values), bytes(simulate(input).values), name));
  });

  it('gives a lone run every thread, and shares them with a run that arrives: the tiny run is answered before the large one', async () => {
    const shared = pool(2);
    const finished: string[] = [];
    const first = shared.start(large(7), buildGrid(large(7))).done.then(() => finished.push('large'));
    assert.equal(shared.busyThreads(), 2, 'the lone run has a unit on both threads');
    const second = shared.start(TINY, buildGrid(TINY)).done.then(() => finished.push('tiny'));
    await Promise.all([first, second]);
    assert.deepEqual(finished, ['tiny', 'large']);
    assert.equal(shared.busyThreads(), 0);
  });

  it('stops a cancelled run: its answer is rejected at once, its threads fall idle after their unit, and the next run is answered', async () => {
    const shared = pool(2);
    // 100,000 scenarios × 30 years of daily steps: minutes of CPU if it ran to the end.
    const huge = large(30, 100_000);
    const run = shared.start(huge, buildGrid(huge));
    await until(() => shared.busyThreads() === 2, 'the run keeps both threads busy');
    const reason = new Error('the client left');
    run.cancel(reason);
    await assert.rejects(run.done, (error) => error === reason);
    await until(() => shared.busyThreads() === 0, 'the threads stopped working on the cancelled run');
    const out = await shared.start(TINY, buildGrid(TINY)).done;
    assert.equal(bytes(out.values), bytes(simulate(TINY).values));
  });

  it('fails a run whose unit throws on a thread with its error, and answers the next run', async () => {
    const shared = pool(2);
    // Not positive semi-definite: the request's checks refuse it; here it reaches the threads.
    const bad = { ...SHAPES[0]!.input, correlation: Float64Array.of(1, 2, 2, 1) };
    await assert.rejects(shared.start(bad, buildGrid(bad)).done, /^Error: simulation failed: correlation matrix is not positive semi-definite$/);
    const out = await shared.start(TINY, buildGrid(TINY)).done;
    assert.equal(bytes(out.values), bytes(simulate(TINY).values));
  });

  it('refuses runs once closed, and rejects those it was running', async () => {
    const closing = simulationPool(2);
    const running = assert.rejects(closing.start(large(7), buildGrid(large(7))).done, /the simulation pool is closed/);
    await closing.close();
    await running;
    await assert.rejects(closing.start(TINY, buildGrid(TINY)).done, /the simulation pool is closed/);
  });
});
