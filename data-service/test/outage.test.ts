import assert from 'node:assert/strict';
import { Outage, type OutageChange } from '../src/domain/outage.ts';

// The replica's view of Postgres (docs/adr/0025-data-service-degraded.md), on a clock of the test's.

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function outage(maxMs = 1000) {
  let now = 0;
  const changes: OutageChange[] = [];
  const o = new Outage(
    maxMs,
    () => now,
    (c) => changes.push(c),
  );
  return { o, changes, at: (ms: number) => (now = ms) };
}

describe('Outage: degraded for a bounded time while Postgres does not answer', () => {
  it('is unknown until Postgres first answers, and a failure then is no outage (nothing verified to serve)', () => {
    const { o, changes } = outage();
    o.unreachable();
    assert.equal(o.mode(), 'unknown');
    o.reachable();
    assert.equal(o.mode(), 'ok');
    assert.deepEqual(changes, []);
  });

  it('is degraded from the first failure until maxMs, then expired; each transition is told once', () => {
    const { o, changes, at } = outage(1000);
    o.reachable();
    at(100);
    o.unreachable();
    at(500);
    o.unreachable();
    assert.equal(o.mode(), 'degraded');
    at(1099);
    assert.equal(o.mode(), 'degraded');
    at(1100);
    assert.equal(o.mode(), 'expired');
    assert.equal(o.mode(), 'expired');
    at(1500);
    o.reachable();
    o.reachable();
    assert.equal(o.mode(), 'ok');
    assert.deepEqual(changes, [{ to: 'degraded' }, { to: 'expired', afterMs: 1000 }, { to: 'ok', afterMs: 1400 }]);
  });

  it('counts maxMs afresh for a new outage', () => {
    const { o, at } = outage(1000);
    o.reachable();
    o.unreachable();
    at(5000);
    assert.equal(o.mode(), 'expired');
    o.reachable();
    o.unreachable();
    at(5999);
    assert.equal(o.mode(), 'degraded');
  });

  it('with maxMs 0 never serves cached values', async () => {
    const { o } = outage(0);
    await o.read(
      async () => 1,
      () => 2,
    );
    await assert.rejects(
      o.read(
        () => Promise.reject(refused()),
        () => 2,
      ),
      /ECONNREFUSED/,
    );
    assert.equal(o.mode(), 'expired');
  });

  describe('read', () => {
    it("answers the read's value and records that Postgres answers", async () => {
      const { o } = outage();
      assert.equal(
        await o.read(
          async () => 'fresh',
          () => 'cached',
        ),
        'fresh',
      );
      assert.equal(o.mode(), 'ok');
    });

    it('answers the cached value while degraded, and refuses what was never cached', async () => {
      const { o } = outage();
      await o.read(
        async () => 'fresh',
        () => undefined,
      );
      assert.equal(
        await o.read(
          () => Promise.reject(refused()),
          () => 'cached',
        ),
        'cached',
      );
      assert.equal(o.mode(), 'degraded');
      await assert.rejects(
        o.read(
          () => Promise.reject(refused()),
          () => undefined,
        ),
        /ECONNREFUSED/,
      );
    });

    it('answers from the cache without asking Postgres within probeMs of a failed read, and asks again after', async () => {
      const { o, at } = outage(10_000);
      await o.read(
        async () => 'fresh',
        () => undefined,
      );
      await o.read(
        () => Promise.reject(refused()),
        () => 'cached',
      );
      let asked = 0;
      const ask = () => {
        asked++;
        return Promise.reject(refused());
      };
      at(999);
      assert.equal(await o.read(ask, () => 'cached'), 'cached');
      assert.equal(asked, 0);
      at(1000);
      assert.equal(await o.read(ask, () => 'cached'), 'cached');
      assert.equal(asked, 1);
      at(1500);
      assert.equal(
        await o.read(
          async () => 'fresh again',
          () => 'cached',
        ),
        'cached',
        'still within probeMs of the last failure',
      );
      at(2000);
      assert.equal(
        await o.read(
          async () => 'fresh again',
          () => 'cached',
        ),
        'fresh again',
      );
      assert.equal(o.mode(), 'ok');
    });

    it('refuses the cached value once expired', async () => {
      const { o, at } = outage(1000);
      await o.read(
        async () => 'fresh',
        () => undefined,
      );
      await o.read(
        () => Promise.reject(refused()),
        () => 'cached',
      );
      at(1000);
      await assert.rejects(
        o.read(
          () => Promise.reject(refused()),
          () => 'cached',
        ),
        /ECONNREFUSED/,
      );
    });

    it('passes on an error that is not about reaching Postgres, without entering an outage', async () => {
      const { o } = outage();
      await o.read(
        async () => 'fresh',
        () => undefined,
      );
      const wrong = Object.assign(new Error('relation does not exist'), { code: '42P01' });
      await assert.rejects(
        o.read(
          () => Promise.reject(wrong),
          () => 'cached',
        ),
        /relation/,
      );
      assert.equal(o.mode(), 'ok');
    });
  });
});
