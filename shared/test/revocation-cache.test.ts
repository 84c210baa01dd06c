import assert from 'node:assert/strict';
import { createRevocationCache, type TenantRevocations } from '../src/revocation-cache.ts';

describe('revocation cache', () => {
  const state = (...revoked: string[]): TenantRevocations => ({ active: true, revoked: new Set(revoked) });

  it('reads a tenant again once checkMs have passed since the read started, not before', async () => {
    let clock = 0;
    const reads: number[] = [];
    const cache = createRevocationCache({ checkMs: 5_000, now: () => clock, read: async () => (reads.push(clock), state(`at-${clock}`)) });
    assert.ok((await cache.get('t')).revoked.has('at-0'));
    clock = 4_999;
    assert.ok((await cache.get('t')).revoked.has('at-0'));
    clock = 5_000;
    assert.ok((await cache.get('t')).revoked.has('at-5000'));
    assert.deepEqual(reads, [0, 5_000]);
  });

  it('keeps tenants apart and reads on every call with checkMs 0', async () => {
    const reads: string[] = [];
    const cache = createRevocationCache({ checkMs: 0, read: async (tenant) => (reads.push(tenant), state(tenant)) });
    await cache.get('a');
    await cache.get('a');
    assert.ok((await cache.get('b')).revoked.has('b'));
    assert.deepEqual(reads, ['a', 'a', 'b']);
  });

  it('shares a read in flight, unless it started more than checkMs ago', async () => {
    let clock = 0;
    let reads = 0;
    const pending: ((s: TenantRevocations) => void)[] = [];
    const cache = createRevocationCache({ checkMs: 1_000, now: () => clock, read: () => (reads++, new Promise((resolve) => pending.push(resolve))) });
    const first = cache.get('t');
    const joined = cache.get('t');
    assert.equal(reads, 1);
    clock = 1_000;
    const fresh = cache.get('t');
    assert.equal(reads, 2, 'a read older than checkMs may predate a revocation');
    pending[0]!(state());
    pending[1]!(state('k'));
    assert.equal((await first).revoked.size, 0);
    assert.equal((await joined).revoked.size, 0);
    assert.ok((await fresh).revoked.has('k'));
  });

  it('does not remember a failed read', async () => {
    let fail = true;
    const cache = createRevocationCache({
      checkMs: 60_000,
      read: async () => {
        if (fail) throw new Error('database away');
        return state('k');
      },
    });
    await assert.rejects(cache.get('t'), /database away/);
    fail = false;
    assert.ok((await cache.get('t')).revoked.has('k'));
  });
});
