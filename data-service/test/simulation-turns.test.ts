import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FORGET_BELOW, SimulationTurns } from '../src/workers/simulation-turns.ts';

// Whose unit a free simulation thread takes next (pure): fair share over recent time, tenants by
// their decayed usage, then their runs in turn. The clock is a variable the tests move, so every
// assertion is about the order of units, never about time passing. With real threads:
// simulation-threads.test.ts; the runs that may be in progress: simulation-scheduler.test.ts.

const HALF_LIFE = 1000;

function turnsWithClock() {
  const clock = { now: 0 };
  const turns = new SimulationTurns<string>({ halfLifeMs: HALF_LIFE, now: () => clock.now });
  return { turns, clock };
}

/** Runs named by tenant letter and number ('a1'); each always has a unit ready unless listed in `blocked`. */
const take = (turns: SimulationTurns<string>, count: number, blocked: Set<string> = new Set()) =>
  Array.from({ length: count }, () => turns.next((run) => (blocked.has(run) ? undefined : `${run}-unit`))?.run);

/** `count` units, the clock moving `stepMs` before each: threads that hand out a unit every `stepMs`. */
const takeOverTime = (turns: SimulationTurns<string>, clock: { now: number }, count: number, stepMs: number) =>
  Array.from({ length: count }, () => {
    clock.now += stepMs;
    return turns.next((run) => `${run}-unit`)!.run;
  });

describe('fair share of the simulation threads between tenants (decayed usage)', () => {
  it("gives a tenant's many runs together no more units than another tenant's one run, its runs in turn", () => {
    const { turns } = turnsWithClock();
    for (const run of ['a1', 'a2', 'a3']) turns.add(run, 'A');
    turns.add('b1', 'B');
    assert.deepEqual(take(turns, 8), ['a1', 'b1', 'a2', 'b1', 'a3', 'b1', 'a1', 'b1']);
  });

  it('halves a unit’s weight in its tenant’s usage every half-life', () => {
    const { turns, clock } = turnsWithClock();
    turns.add('a1', 'A');
    take(turns, 4);
    assert.equal(turns.usage('A'), 4);
    clock.now += HALF_LIFE;
    assert.equal(turns.usage('A'), 2);
    clock.now += 2 * HALF_LIFE;
    assert.equal(turns.usage('A'), 0.5);
    assert.equal(turns.usage('B'), 0, 'a tenant never seen has none');
  });

  it("under A's continuous burst, hands B's run every unit from its arrival until its usage catches up with A's, and holds A back at most one half-life", () => {
    const { turns, clock } = turnsWithClock();
    const step = 10; // a unit handed out every 10 ms
    for (const run of ['a1', 'a2']) turns.add(run, 'A');
    takeOverTime(turns, clock, 2000, step); // 20 half-lives: A's usage is at its steady state
    const arrival = clock.now;
    turns.add('b1', 'B');
    const order: string[] = [];
    // Every unit handed out while B's usage is below A's goes to B.
    while (turns.usage('B') < turns.usage('A')) {
      order.push(takeOverTime(turns, clock, 1, step)[0]!);
      assert.equal(order.at(-1), 'b1', `unit ${order.length} after B's arrival went to A while B's usage was below A's`);
    }
    const caughtUp = order.length;
    assert.ok(caughtUp > 1, 'B got more than its equal turn');
    const next = takeOverTime(turns, clock, 3, step);
    assert.ok(next.includes('a1') || next.includes('a2'), `A takes its turn again once B caught up: ${next.join(' ')}`);
    // A at its steady state and B taking every unit meet after one half-life at most.
    assert.ok(clock.now - arrival <= HALF_LIFE + 3 * step, `A held back from ${arrival} to ${clock.now} ms`);
  });

  it('hands a short run of B every unit until it ends, then A every unit again (work-conserving)', () => {
    const { turns, clock } = turnsWithClock();
    turns.add('a1', 'A');
    takeOverTime(turns, clock, 500, 10);
    turns.add('b1', 'B');
    const units = 20; // B's whole run, far less than A's usage
    assert.deepEqual(takeOverTime(turns, clock, units, 10), Array<string>(units).fill('b1'));
    turns.remove('b1');
    assert.deepEqual(takeOverTime(turns, clock, 5, 10), Array<string>(5).fill('a1'));
  });

  it('converges to equal shares for two tenants that both keep the threads busy, whoever came first', () => {
    const { turns, clock } = turnsWithClock();
    turns.add('a1', 'A');
    takeOverTime(turns, clock, 300, 10);
    for (const run of ['b1', 'b2', 'b3']) turns.add(run, 'B');
    const order = takeOverTime(turns, clock, 5000, 10).map((run) => run[0]);
    const late = order.slice(-2000);
    const [a, b] = ['a', 'b'].map((t) => late.filter((x) => x === t).length);
    assert.ok(Math.abs(a! - b!) <= 1, `A ${a} and B ${b} units of the last 2000`);
    for (let i = 0; i + 10 <= late.length; i += 10) {
      const window = late.slice(i, i + 10);
      assert.equal(window.filter((x) => x === 'a').length, 5, `every 10 units half are A's: ${window.join('')}`);
    }
    assert.ok(order.filter((x) => x === 'b').length > order.filter((x) => x === 'a').length, 'B caught up first');
  });

  it('passes over a tenant with no unit ready; once it has one, it goes first until its usage catches up', () => {
    const { turns } = turnsWithClock();
    turns.add('a1', 'A');
    turns.add('b1', 'B');
    assert.deepEqual(take(turns, 2), ['a1', 'b1']);
    assert.deepEqual(take(turns, 3, new Set(['b1'])), ['a1', 'a1', 'a1']);
    // A 4, B 1: B takes three, then at 4 each A's last unit is the older one.
    assert.deepEqual(take(turns, 5), ['b1', 'b1', 'b1', 'a1', 'b1']);
    assert.equal(take(turns, 1, new Set(['a1', 'b1']))[0], undefined);
  });

  it('gives a unit to be held ahead of a running one only to the tenant first in turn; a thread with nothing to run takes any', () => {
    const { turns } = turnsWithClock();
    turns.add('a1', 'A');
    take(turns, 4);
    turns.add('b1', 'B');
    const blocked = (run: string) => (run === 'b1' ? undefined : `${run}-unit`);
    // B is first in turn (no usage) but its unit is running: nothing to hold ahead, not A's.
    assert.equal(turns.next(blocked, true), undefined);
    assert.equal(turns.next(blocked)?.run, 'a1', 'an idle thread takes A’s unit');
    assert.equal(turns.next((run) => `${run}-unit`, true)?.run, 'b1');
    assert.equal(turns.usage('A'), 5, 'the refused hand-out charged nobody');
  });

  it('keeps a tenant’s usage after its runs end, and forgets the tenant once its usage has decayed away', () => {
    const { turns, clock } = turnsWithClock();
    turns.add('a1', 'A');
    turns.add('b1', 'B');
    assert.deepEqual(take(turns, 6), ['a1', 'b1', 'a1', 'b1', 'a1', 'b1']);
    turns.remove('b1');
    assert.deepEqual([turns.count(), turns.count('A'), turns.count('B')], [1, 1, 0]);
    assert.deepEqual(take(turns, 2), ['a1', 'a1']);
    // B comes back with its 3 units against A's 5: it is not new, it goes first for two units.
    turns.add('b2', 'B');
    assert.deepEqual(take(turns, 3), ['b2', 'b2', 'a1']);
    turns.remove('b2');
    turns.remove('b2');
    assert.equal(turns.count(), 1);
    assert.throws(() => turns.add('a1', 'A'), /already in progress/);

    clock.now += Math.ceil(Math.log2(5 / FORGET_BELOW)) * HALF_LIFE;
    take(turns, 1);
    assert.equal(turns.usage('B'), 0, 'forgotten');
    turns.add('b3', 'B');
    assert.equal(take(turns, 1)[0], 'b3');
  });

  it('always serves, among the tenants with a unit ready, the one with the least decayed usage, on a tie the one served longest ago, and within it the run served longest ago; ahead of a running unit only the tenant first in turn (random workloads)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), tenant: fc.constantFrom('A', 'B', 'C') }),
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('next' as const), blocked: fc.array(fc.nat({ max: 11 }), { maxLength: 6 }), ahead: fc.boolean() }),
      // Whole half-lives, at most 40 of them: every usage stays exact in binary, so ties are ties.
      fc.record({ kind: fc.constant('wait' as const), halfLives: fc.constantFrom(0, 1, 2) }),
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 50, maxLength: 150 }), (ops) => {
        const { turns, clock } = turnsWithClock();
        const runs: { name: string; tenant: string }[] = [];
        // The model: the times each tenant was handed a unit, and the order number of each tenant's and run's last unit.
        const handed = new Map<string, number[]>();
        const tenantLast = new Map<string, { last: number; arrival: number }>();
        const runLast = new Map<string, number>();
        const usage = (tenant: string) => (handed.get(tenant) ?? []).reduce((sum, at) => sum + 2 ** (-(clock.now - at) / HALF_LIFE), 0);
        let n = 0;
        let order = 0;
        let waited = 0;
        for (const o of ops) {
          if (o.kind === 'wait') {
            if (waited + o.halfLives > 40) continue;
            waited += o.halfLives;
            clock.now += o.halfLives * HALF_LIFE;
          } else if (o.kind === 'add') {
            const name = `${o.tenant}${n++}`;
            if (!tenantLast.has(o.tenant)) tenantLast.set(o.tenant, { last: -1, arrival: n });
            runs.push({ name, tenant: o.tenant });
            runLast.set(name, -1);
            turns.add(name, o.tenant);
          } else if (o.kind === 'remove' && runs.length > 0) {
            const [gone] = runs.splice(o.pick % runs.length, 1);
            turns.remove(gone!.name);
          } else if (o.kind === 'next') {
            // A tenant with no run in progress whose usage decayed below FORGET_BELOW starts afresh.
            for (const tenant of tenantLast.keys()) {
              if (!runs.some((r) => r.tenant === tenant) && usage(tenant) < FORGET_BELOW) {
                tenantLast.delete(tenant);
                handed.delete(tenant);
              }
            }
            const blocked = new Set(o.blocked.map((i) => runs[i]?.name));
            const ready = runs.filter((r) => !blocked.has(r.name));
            const got = turns.next((run) => (blocked.has(run) ? undefined : run), o.ahead);
            // Ahead of a running unit, only the tenant first in turn among all with runs in progress may have one.
            const first = [...new Set(runs.map((r) => r.tenant))].sort((x, y) => {
              const [tx, ty] = [tenantLast.get(x)!, tenantLast.get(y)!];
              return usage(x) - usage(y) || tx.last - ty.last || tx.arrival - ty.arrival;
            })[0];
            const candidates = o.ahead ? ready.filter((r) => r.tenant === first) : ready;
            if (candidates.length === 0) {
              assert.equal(got, undefined, o.ahead ? `${got?.run} held ahead though ${first} is first in turn` : 'nothing was ready');
              continue;
            }
            assert.ok(got, 'a run had a unit ready');
            const chosen = runs.find((r) => r.name === got.run)!;
            assert.ok(!o.ahead || chosen.tenant === first, `${chosen.name} held ahead though ${first} is first in turn`);
            const least = Math.min(...ready.map((r) => usage(r.tenant)));
            assert.equal(usage(chosen.tenant), least, `${chosen.name} of a tenant with more usage than another with a unit ready`);
            const mine = tenantLast.get(chosen.tenant)!;
            for (const other of new Set(ready.filter((r) => usage(r.tenant) === least).map((r) => r.tenant))) {
              const theirs = tenantLast.get(other)!;
              assert.ok(
                mine.last < theirs.last || (mine.last === theirs.last && mine.arrival <= theirs.arrival),
                `${chosen.tenant} before ${other}, served longer ago`,
              );
            }
            const own = ready.filter((r) => r.tenant === chosen.tenant);
            assert.equal(runLast.get(chosen.name), Math.min(...own.map((r) => runLast.get(r.name)!)), `${chosen.name} before an older run of its tenant`);
            handed.set(chosen.tenant, [...(handed.get(chosen.tenant) ?? []), clock.now]);
            mine.last = order;
            runLast.set(chosen.name, order++);
          }
          assert.equal(turns.count(), runs.length);
          for (const tenant of ['A', 'B', 'C']) assert.equal(turns.usage(tenant), tenantLast.has(tenant) ? usage(tenant) : 0, `usage of ${tenant}`);
        }
      }),
    );
  });
});
