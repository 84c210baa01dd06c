import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDay } from '../src/simulation/dates.ts';
import { simulate, type SimulationInput } from '../src/simulation/engine.ts';
import { buildGrid } from '../src/simulation/grid.ts';
import { simulationPool, type SimulationPool, type UnitEvent } from '../src/workers/simulation-pool.ts';
import { SHAPES } from './simulation-cases.ts';

// The worker threads of the data service's simulations (docs/adr/0030-monte-carlo-threads.md): the
// same bytes as the engine in process on 1, 2 and 3 threads, runs and tenants sharing the threads
// unit by unit, cancellation and failure. Orders of completion and the pool's own counts are asserted,
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
  const pool = (threads: number, observe?: (event: UnitEvent) => void) => {
    const created = simulationPool(threads, { observe });
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

  it("hands tenant B's run the next unit while tenant A's runs fill the threads, and answers every run the bytes of an undisturbed one", async () => {
    const events: UnitEvent[] = [];
    const shared = pool(2, (event) => events.push(event));
    const inputsA = [
      { ...large(4), seed: 11 },
      { ...large(4), seed: 12 },
    ];
    const runsA = inputsA.map((input) => shared.start(input, buildGrid(input), 'A').done);
    // Both threads hold two of A's units: the one they run and the next.
    await until(() => events.filter((e) => e.event === 'out').length - events.filter((e) => e.event === 'done').length === 4, "A's units fill the threads");
    const arrival = events.length;
    const inputB = { ...large(2), seed: 13 };
    const outB = await shared.start(inputB, buildGrid(inputB), 'B').done;
    const outsA = await Promise.all(runsA);

    const after = events.slice(arrival);
    const firstOut = after.findIndex((e) => e.event === 'out' && e.tenant === 'B');
    assert.ok(firstOut >= 0, "B's units were handed out");
    const before = after.slice(0, firstOut);
    assert.deepEqual(
      before.filter((e) => e.event === 'out'),
      [],
      'no unit of A was handed out between the arrival of B and its first unit',
    );
    assert.ok(
      before.filter((e) => e.event === 'done').length <= 1,
      `B's first unit went to the first thread that finished a unit: ${before.length} events before`,
    );
    const { thread } = after[firstOut]!;
    const firstDone = after.findIndex((e, i) => i > firstOut && e.event === 'done' && e.tenant === 'B' && e.thread === thread);
    const aheadOfB = after.slice(firstOut + 1, firstDone).filter((e) => e.event === 'done' && e.thread === thread);
    assert.ok(aheadOfB.length <= 1, `B's first unit ran after at most the unit its thread held ahead, not ${aheadOfB.length}`);

    assert.equal(bytes(outB.values), bytes(simulate(inputB).values), "B's answer is that of an undisturbed run");
    inputsA.forEach((input, i) => assert.equal(bytes(outsA[i]!.values), bytes(simulate(input).values), `A's run ${i + 1}`));
  });

  it("hands tenant B's run every unit from its arrival until its usage catches up with tenant A's two runs, then shares", async () => {
    const events: UnitEvent[] = [];
    // One thread, where units are handed out only as the thread answers, and a clock that stands
    // still, so that a usage is the count of units: the order does not depend on timing.
    const created = simulationPool(1, { observe: (event) => events.push(event), turns: { now: () => 0 } });
    pools.push(created);
    const inputsA = [
      { ...large(4), seed: 31 },
      { ...large(4), seed: 32 },
    ];
    const runsA = inputsA.map((input) => created.start(input, buildGrid(input), 'A').done);
    await until(() => events.filter((e) => e.event === 'done').length >= 6, "A's runs are under way");
    const arrival = events.length;
    const usageA = events.filter((e) => e.event === 'out').length;
    const inputB = { ...large(3), seed: 33 };
    const outB = await created.start(inputB, buildGrid(inputB), 'B').done;
    await Promise.all(runsA);

    const outs = events.slice(arrival).filter((e) => e.event === 'out');
    const last = outs.findLastIndex((e) => e.tenant === 'B');
    const unitsB = outs.filter((e) => e.tenant === 'B').length;
    assert.ok(unitsB > usageA, `B's run (${unitsB} units) outlasts A's usage (${usageA}), so that both phases show`);
    const order = outs.map((e) => e.tenant).join('');
    assert.equal(order.slice(0, usageA), 'B'.repeat(usageA), `B has every unit until it has had as many as A: ${order}`);
    const after = order.slice(usageA, last + 1);
    const a = [...after].filter((t) => t === 'A').length;
    assert.ok(a >= 1 && a <= after.length - a + 1, `then they share: ${after}`);
    assert.equal(bytes(outB.values), bytes(simulate(inputB).values));
  });

  it("drops the remaining units of a cancelled run of tenant B while tenant A's runs go on, and answers A's runs their own bytes", async () => {
    const events: UnitEvent[] = [];
    const shared = pool(2, (event) => events.push(event));
    const inputsA = [
      { ...large(3), seed: 21 },
      { ...large(3), seed: 22 },
    ];
    const runsA = inputsA.map((input) => shared.start(input, buildGrid(input), 'A').done);
    const inputB = { ...large(10), seed: 23 };
    const runB = shared.start(inputB, buildGrid(inputB), 'B');
    await until(() => events.filter((e) => e.event === 'done' && e.tenant === 'B').length >= 2, "B's run is under way");
    const outstanding =
      events.filter((e) => e.tenant === 'B' && e.event === 'out').length - events.filter((e) => e.tenant === 'B' && e.event === 'done').length;
    const cancelledAt = events.length;
    const reason = new Error('the client left');
    runB.cancel(reason);
    await assert.rejects(runB.done, (error) => error === reason);
    const outsA = await Promise.all(runsA);
    await until(() => shared.busyThreads() === 0, 'the threads fall idle');

    const afterCancel = events.slice(cancelledAt).filter((e) => e.tenant === 'B');
    assert.deepEqual(
      afterCancel.filter((e) => e.event === 'out'),
      [],
      'no unit of the cancelled run handed out',
    );
    assert.equal(afterCancel.length, outstanding, 'only the units the threads held when it was cancelled were answered, and dropped');
    inputsA.forEach((input, i) => assert.equal(bytes(outsA[i]!.values), bytes(simulate(input).values), `A's run ${i + 1}`));
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
