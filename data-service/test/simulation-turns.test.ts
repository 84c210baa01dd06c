import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SimulationTurns } from '../src/workers/simulation-turns.ts';

// Whose unit a free simulation thread takes next (pure): tenants in turn, then their runs in turn.
// With real threads: simulation-threads.test.ts; the runs that may be in progress:
// simulation-scheduler.test.ts.

/** Runs named by tenant letter and number ('a1'); each always has a unit ready unless listed in `blocked`. */
const take = (turns: SimulationTurns<string>, count: number, blocked: Set<string> = new Set()) =>
  Array.from({ length: count }, () => turns.next((run) => (blocked.has(run) ? undefined : `${run}-unit`))?.run);

describe('turns of the simulation threads between tenants and runs', () => {
  it("gives a tenant's many runs one turn per round together, like another tenant's one run", () => {
    const turns = new SimulationTurns<string>();
    for (const run of ['a1', 'a2', 'a3']) turns.add(run, 'A');
    turns.add('b1', 'B');
    assert.deepEqual(take(turns, 8), ['a1', 'b1', 'a2', 'b1', 'a3', 'b1', 'a1', 'b1']);
  });

  it('hands the next unit to the run of a tenant that had none in progress, before every tenant that had units', () => {
    const turns = new SimulationTurns<string>();
    for (const run of ['a1', 'a2']) turns.add(run, 'A');
    turns.add('c1', 'C');
    take(turns, 7);
    turns.add('b1', 'B');
    assert.equal(take(turns, 1)[0], 'b1');
    // Then B takes its turn in the round like the others.
    assert.deepEqual(take(turns, 3), ['c1', 'a1', 'b1']);
  });

  it('passes over a run with no unit ready, keeping its turn, and gives the thread to the next tenant', () => {
    const turns = new SimulationTurns<string>();
    turns.add('a1', 'A');
    turns.add('b1', 'B');
    assert.deepEqual(take(turns, 2), ['a1', 'b1']);
    assert.deepEqual(take(turns, 3, new Set(['b1'])), ['a1', 'a1', 'a1']);
    // B's last unit is now the oldest: it goes first once it has one ready.
    assert.deepEqual(take(turns, 2), ['b1', 'a1']);
    assert.equal(take(turns, 1, new Set(['a1', 'b1']))[0], undefined);
  });

  it('forgets a run that ended; a tenant whose runs all ended counts as new when it comes back', () => {
    const turns = new SimulationTurns<string>();
    turns.add('a1', 'A');
    turns.add('b1', 'B');
    take(turns, 4);
    turns.remove('b1');
    assert.deepEqual([turns.count(), turns.count('A'), turns.count('B')], [1, 1, 0]);
    assert.deepEqual(take(turns, 2), ['a1', 'a1']);
    turns.add('b2', 'B');
    assert.deepEqual(take(turns, 3), ['b2', 'a1', 'b2']);
    turns.remove('b2');
    turns.remove('b2');
    assert.equal(turns.count(), 1);
    assert.throws(() => turns.add('a1', 'A'), /already in progress/);
  });

  it('always serves the tenant whose last unit is oldest among those with a unit ready, and within it the run whose last unit is oldest (random workloads)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), tenant: fc.constantFrom('A', 'B', 'C') }),
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('next' as const), blocked: fc.array(fc.nat({ max: 11 }), { maxLength: 6 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 150 }), (ops) => {
        const turns = new SimulationTurns<string>();
        const runs: { name: string; tenant: string }[] = [];
        // The model: order number of each tenant's and run's last unit; tenants and runs start at −1.
        const tenantLast = new Map<string, number>();
        const runLast = new Map<string, number>();
        let n = 0;
        let clock = 0;
        for (const o of ops) {
          if (o.kind === 'add') {
            const name = `${o.tenant}${n++}`;
            if (!runs.some((r) => r.tenant === o.tenant)) tenantLast.set(o.tenant, -1);
            runs.push({ name, tenant: o.tenant });
            runLast.set(name, -1);
            turns.add(name, o.tenant);
          } else if (o.kind === 'remove' && runs.length > 0) {
            const [gone] = runs.splice(o.pick % runs.length, 1);
            turns.remove(gone!.name);
          } else if (o.kind === 'next') {
            const blocked = new Set(o.blocked.map((i) => runs[i]?.name));
            const ready = runs.filter((r) => !blocked.has(r.name));
            const got = turns.next((run) => (blocked.has(run) ? undefined : run));
            if (ready.length === 0) {
              assert.equal(got, undefined);
              continue;
            }
            assert.ok(got, 'a run had a unit ready');
            const chosen = runs.find((r) => r.name === got.run)!;
            const oldestTenant = Math.min(...ready.map((r) => tenantLast.get(r.tenant)!));
            assert.equal(tenantLast.get(chosen.tenant), oldestTenant, `${chosen.name} of a tenant served more recently than another with a unit ready`);
            const mine = ready.filter((r) => r.tenant === chosen.tenant);
            assert.equal(runLast.get(chosen.name), Math.min(...mine.map((r) => runLast.get(r.name)!)), `${chosen.name} before an older run of its tenant`);
            tenantLast.set(chosen.tenant, clock);
            runLast.set(chosen.name, clock++);
          }
          assert.equal(turns.count(), runs.length);
        }
      }),
    );
  });
});
