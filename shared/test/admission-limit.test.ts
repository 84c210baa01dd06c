import assert from 'node:assert/strict';
import { AdmissionLimit, type AdmissionLimitSettings } from '../src/http/admission-limit.ts';

// The adaptive limit of docs/adr/0062-overload-shedding.md, with the clock and the signals given.
describe('admission limit', () => {
  const settings: AdmissionLimitSettings = {
    eventLoopDelayTargetMs: 50,
    dbWaitTargetMs: 50,
    minLimit: 4,
    maxLimit: 200,
    initialLimit: 20,
    decreaseHoldMs: 200,
  };
  const calm = { eventLoopDelayMs: 2, dbWaitMs: 0 };
  /** Admits `n` requests, each of which must be admitted. */
  const admitAll = (limit: AdmissionLimit, n: number) => {
    for (let i = 0; i < n; i++) assert.equal(limit.admit(), undefined, `request ${i + 1} of ${n} admitted`);
  };

  it('admits up to the limit and sheds beyond it, and a released request makes room', () => {
    const limit = new AdmissionLimit(settings);
    admitAll(limit, 20);
    assert.equal(limit.admit(), 'event_loop');
    assert.equal(limit.inFlight, 20, 'a shed request is not counted in flight');
    limit.release();
    assert.equal(limit.admit(), undefined);
    assert.equal(limit.inFlight, 20);
  });

  it('lowers the limit to 0.9 × the requests in flight when the event loop is late, and names that signal', () => {
    const limit = new AdmissionLimit({ ...settings, initialLimit: 100 });
    admitAll(limit, 30);
    limit.sample({ eventLoopDelayMs: 120, dbWaitMs: 0 }, 0);
    assert.equal(limit.limit, 27);
    assert.equal(limit.admit(), 'event_loop', 'requests in flight (30) are over the new limit');
  });

  it('lowers the limit on the database wait alone, and names the database', () => {
    const limit = new AdmissionLimit(settings);
    admitAll(limit, 20);
    limit.sample({ eventLoopDelayMs: 5, dbWaitMs: 300 }, 0);
    assert.equal(limit.limit, 18);
    assert.equal(limit.reason, 'database');
    assert.equal(limit.admit(), 'database');
  });

  it('names the signal further over its target when both are', () => {
    const limit = new AdmissionLimit(settings);
    admitAll(limit, 10);
    limit.sample({ eventLoopDelayMs: 400, dbWaitMs: 60 }, 0);
    assert.equal(limit.reason, 'event_loop');
    limit.sample({ eventLoopDelayMs: 60, dbWaitMs: 4000 }, 1000);
    assert.equal(limit.reason, 'database');
  });

  it('ignores the database wait when no database target is set', () => {
    const limit = new AdmissionLimit({ ...settings, dbWaitTargetMs: undefined });
    admitAll(limit, 20);
    limit.sample({ eventLoopDelayMs: 5, dbWaitMs: 10_000 }, 0);
    assert.ok(limit.limit >= 20, `limit ${limit.limit}`);
  });

  it('leaves the limit when the event loop is late with fewer than 2 × minLimit requests in flight (not their doing)', () => {
    const limit = new AdmissionLimit({ ...settings, initialLimit: 100 });
    admitAll(limit, 7);
    limit.sample({ eventLoopDelayMs: 900, dbWaitMs: 900 }, 0);
    assert.equal(limit.limit, 100);
    admitAll(limit, 1);
    limit.sample({ eventLoopDelayMs: 900 }, 1000);
    assert.equal(limit.limit, 7, 'with 8 in flight it falls to 0.9 × 8');
  });

  it('lowers at most once per decreaseHoldMs, however many samples are over target', () => {
    const limit = new AdmissionLimit({ ...settings, initialLimit: 100 });
    admitAll(limit, 100);
    limit.sample({ eventLoopDelayMs: 500 }, 0);
    assert.equal(limit.limit, 90);
    limit.sample({ eventLoopDelayMs: 500 }, 50);
    limit.sample({ eventLoopDelayMs: 500 }, 199);
    assert.equal(limit.limit, 90);
    limit.sample({ eventLoopDelayMs: 500 }, 200);
    assert.equal(limit.limit, 81);
  });

  it('never goes below minLimit nor above maxLimit', () => {
    const limit = new AdmissionLimit({ ...settings, initialLimit: 10 });
    admitAll(limit, 10);
    for (let t = 0; t < 5000; t += 200) limit.sample({ eventLoopDelayMs: 1000 }, t);
    assert.equal(limit.limit, 4);
    const growing = new AdmissionLimit({ ...settings, initialLimit: 190 });
    admitAll(growing, 190);
    for (let t = 0; t < 5000; t += 50) growing.sample(calm, t);
    assert.equal(growing.limit, 200);
  });

  it('grows by its square root per calm sample, used or not, back to maxLimit within about 3 s', () => {
    const limit = new AdmissionLimit(settings);
    limit.sample(calm, 0);
    assert.equal(limit.limit, 24, '20 + √20 rounded down');
    const floor = new AdmissionLimit({ ...settings, maxLimit: 1000, initialLimit: 4 });
    let t = 0;
    for (; floor.limit < 1000; t += 50) floor.sample(calm, t);
    assert.ok(t <= 3500, `back to 1000 after ${t} ms`);
  });

  it('lowers to 0.9 × the peak in flight since the last sample, not only the requests in flight now', () => {
    const limit = new AdmissionLimit({ ...settings, initialLimit: 100 });
    admitAll(limit, 15);
    for (let i = 0; i < 15; i++) limit.release();
    limit.sample({ eventLoopDelayMs: 200 }, 0);
    assert.equal(limit.limit, 13);
  });

  it('holds a late event loop at its peak and lets it decay by half per sample', () => {
    const limit = new AdmissionLimit({ ...settings, initialLimit: 100, decreaseHoldMs: 0 });
    admitAll(limit, 100);
    limit.sample({ eventLoopDelayMs: 160 }, 0);
    assert.equal(limit.signals.eventLoopDelayMs, 160);
    limit.sample({ eventLoopDelayMs: 1 }, 50);
    assert.equal(limit.signals.eventLoopDelayMs, 80, 'still over target: lowered again');
    assert.equal(limit.limit, 81);
    limit.sample({ eventLoopDelayMs: 1 }, 100);
    assert.equal(limit.signals.eventLoopDelayMs, 40);
    assert.equal(limit.limit, 90, 'under target again, it grows by √81');
  });

  it('recovers after an overload: shed while over, admitting again once the signals are calm', () => {
    const limit = new AdmissionLimit(settings);
    admitAll(limit, 20);
    limit.sample({ eventLoopDelayMs: 300, dbWaitMs: 0 }, 0);
    assert.equal(limit.admit(), 'event_loop');
    for (let i = 0; i < 20; i++) limit.release();
    for (let t = 50; t <= 500; t += 50) limit.sample(calm, t);
    admitAll(limit, 30);
  });

  it('refuses settings whose minimum is outside 1..maxLimit', () => {
    assert.throws(() => new AdmissionLimit({ ...settings, minLimit: 0 }), RangeError);
    assert.throws(() => new AdmissionLimit({ ...settings, minLimit: 300 }), RangeError);
  });

  it('never counts a release below zero in flight', () => {
    const limit = new AdmissionLimit(settings);
    limit.release();
    assert.equal(limit.inFlight, 0);
  });
});
