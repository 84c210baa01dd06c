import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FairQueue, retryAfterSeconds } from '../src/workers/fair-queue.ts';

// The per-tenant queue in front of the simulation threads (pure): bounds and the order of turns.
// The same rules over HTTP, with real threads: simulation-fairness.test.ts.

describe('fair queue of simulations', () => {
  it("takes another tenant's run before the 2nd..nth run of the tenant that ran last", () => {
    const q = new FairQueue<string>(4);
    q.add('A', 'a1');
    assert.deepEqual(q.take(), { tenant: 'A', item: 'a1' });
    q.add('A', 'a2');
    q.add('A', 'a3');
    q.add('B', 'b1');
    q.finished('A');
    assert.deepEqual(q.take(), { tenant: 'B', item: 'b1' });
    q.finished('B');
    assert.deepEqual([q.take()?.item, q.take()?.item, q.take()], ['a2', 'a3', undefined]);
  });

  it('gives every tenant with waiting runs one turn per round, in order of arrival when none has run', () => {
    const q = new FairQueue<string>(4);
    for (const item of ['a1', 'a2', 'a3']) q.add('A', item);
    for (const item of ['b1', 'b2']) q.add('B', item);
    q.add('C', 'c1');
    const order: string[] = [];
    for (let next = q.take(); next; next = q.take()) {
      order.push(next.item);
      q.finished(next.tenant);
    }
    assert.deepEqual(order, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    assert.equal(q.runningCount(), 0);
    assert.equal(q.waitingCount(), 0);
  });

  it('refuses a run beyond perTenant waiting for that tenant only; a removed or started run frees its place', () => {
    const q = new FairQueue<string>(2);
    assert.equal(q.add('A', 'a1'), true);
    assert.equal(q.add('A', 'a2'), true);
    assert.equal(q.add('A', 'a3'), false);
    assert.equal(q.waitingCount('A'), 2);
    assert.equal(q.add('B', 'b1'), true);
    assert.equal(q.remove('A', 'a2'), true);
    assert.equal(q.remove('A', 'a2'), false);
    assert.equal(q.add('A', 'a3'), true);
    assert.equal(q.take()?.item, 'a1');
    // a1 runs: it no longer takes a waiting place, and it cannot be removed from the queue.
    assert.equal(q.remove('A', 'a1'), false);
    assert.equal(q.add('A', 'a4'), true);
    assert.equal(q.add('A', 'a5'), false);
    assert.deepEqual([q.runningCount(), q.runningCount('A'), q.waitingCount(), q.waitingCount('A'), q.tenantsWaiting()], [1, 1, 3, 2, 2]);
    assert.deepEqual(q.clear().sort(), ['a3', 'a4', 'b1']);
    assert.equal(q.waitingCount(), 0);
  });

  it('never starts a tenant twice while another tenant that was waiting at its first start still waits (random workloads)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), tenant: fc.constantFrom('A', 'B', 'C', 'D') }),
      fc.record({ kind: fc.constant('take' as const) }),
      fc.record({ kind: fc.constant('finish' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), fc.integer({ min: 1, max: 3 }), (ops, slots) => {
        const q = new FairQueue<number>(3);
        const running: string[] = [];
        // For each tenant: the tenants that were waiting when it last started and have not started since.
        const owed = new Map<string, Set<string>>();
        const waitingTenants = new Set<string>();
        let n = 0;
        for (const o of ops) {
          if (o.kind === 'add') {
            if (q.add(o.tenant, n++)) waitingTenants.add(o.tenant);
          } else if (o.kind === 'take' && running.length < slots) {
            const next = q.take();
            if (!next) continue;
            const skipped = [...(owed.get(next.tenant) ?? [])].filter((t) => waitingTenants.has(t));
            assert.deepEqual(skipped, [], `${next.tenant} started again before ${skipped.join(', ')}`);
            for (const others of owed.values()) others.delete(next.tenant);
            owed.set(next.tenant, new Set([...waitingTenants].filter((t) => t !== next.tenant)));
            if (q.waitingCount(next.tenant) === 0) waitingTenants.delete(next.tenant);
            running.push(next.tenant);
          } else if (o.kind === 'finish' && running.length > 0) {
            q.finished(running.shift()!);
          }
          assert.equal(q.runningCount(), running.length);
        }
      }),
    );
  });

  it('takes only from tenants that may start a run, given their runs running; the others keep their place', () => {
    const q = new FairQueue<string>(4);
    for (const item of ['a1', 'a2', 'a3']) q.add('A', item);
    const firstRunOnly = (_tenant: string, running: number) => running === 0;
    assert.equal(q.take(firstRunOnly)?.item, 'a1');
    assert.equal(q.take(firstRunOnly), undefined);
    q.add('B', 'b1');
    assert.equal(q.take(firstRunOnly)?.item, 'b1');
    assert.deepEqual([q.runningCount(), q.waitingCount('A')], [2, 2]);
    q.finished('A');
    assert.equal(q.take(firstRunOnly)?.item, 'a2');
    assert.equal(
      q.take((tenant) => tenant !== 'A'),
      undefined,
    );
    assert.equal(q.take()?.item, 'a3');
  });

  it('Retry-After: about one round of the waiting tenants over the threads, whole seconds, at least 1', () => {
    assert.equal(retryAfterSeconds(1500, 1, 1), 2);
    assert.equal(retryAfterSeconds(1500, 4, 2), 3);
    assert.equal(retryAfterSeconds(10, 1, 4), 1);
    assert.equal(retryAfterSeconds(0, 0, 1), 1);
  });
});
