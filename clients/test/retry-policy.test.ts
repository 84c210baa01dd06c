import assert from 'node:assert/strict';
import { DEFAULT_RETRY, backoffDelay, decideRetry, parseRetryAfter, type RetryInput } from '../src/retry-policy.ts';

const NOW = Date.parse('2026-11-25T12:00:00Z');

describe('client retry policy (pure)', () => {
  describe('Retry-After', () => {
    it('reads delay-seconds and HTTP dates, a past date as 0, and ignores what is neither', () => {
      assert.equal(parseRetryAfter('7', NOW), 7000);
      assert.equal(parseRetryAfter(' 0 ', NOW), 0);
      assert.equal(parseRetryAfter('Wed, 25 Nov 2026 12:00:30 GMT', NOW), 30_000);
      assert.equal(parseRetryAfter('Wed, 25 Nov 2026 11:59:00 GMT', NOW), 0);
      for (const bad of [null, undefined, '', '-1', '1.5', 'soon', '2026-11-25']) assert.equal(parseRetryAfter(bad, NOW), undefined, String(bad));
    });
  });

  describe('back-off', () => {
    it('doubles its ceiling per attempt up to the maximum, with full jitter below it', () => {
      const policy = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
      assert.deepEqual(
        [1, 2, 3, 4, 5, 9].map((attempt) => backoffDelay(attempt, policy, () => 0.999_999)),
        [99, 199, 399, 799, 999, 999],
      );
      assert.equal(
        backoffDelay(3, policy, () => 0),
        0,
      );
      assert.equal(
        backoffDelay(3, policy, () => 0.5),
        200,
      );
    });
  });

  describe('decision', () => {
    const input = (over: Partial<RetryInput>): RetryInput => ({
      attempt: 1,
      method: 'GET',
      keyed: false,
      outcome: { status: 503 },
      elapsedMs: 0,
      now: NOW,
      policy: DEFAULT_RETRY,
      random: () => 0.5,
      ...over,
    });

    it('retries 429 and 503 of any method, waiting what Retry-After says', () => {
      assert.deepEqual(decideRetry(input({ method: 'PATCH', outcome: { status: 429, retryAfter: '2' } })), {
        retry: true,
        delayMs: 2000,
        reason: 'answer 429',
      });
      assert.deepEqual(decideRetry(input({ outcome: { status: 503, retryAfter: null } })), { retry: true, delayMs: 100, reason: 'answer 503' });
    });

    it('does not retry other answers, 4xx refusals and 500 included', () => {
      for (const status of [200, 201, 400, 401, 404, 409, 412, 422, 500, 501]) {
        assert.equal(decideRetry(input({ outcome: { status } })).retry, false, String(status));
      }
    });

    it('retries a 409 with Retry-After (the first call with the key still runs) only for a keyed call', () => {
      assert.equal(decideRetry(input({ method: 'POST', keyed: true, outcome: { status: 409, retryAfter: '1' } })).retry, true);
      assert.equal(decideRetry(input({ method: 'POST', keyed: true, outcome: { status: 409 } })).retry, false);
      assert.equal(decideRetry(input({ method: 'PATCH', outcome: { status: 409, retryAfter: '1' } })).retry, false);
    });

    it('sends again after a lost answer only when repeating is safe: idempotent methods and keyed POSTs', () => {
      const lost = { networkError: true } as const;
      assert.equal(decideRetry(input({ method: 'GET', outcome: lost })).retry, true);
      assert.equal(decideRetry(input({ method: 'DELETE', outcome: lost })).retry, true);
      assert.equal(decideRetry(input({ method: 'POST', keyed: true, outcome: lost })).retry, true);
      assert.equal(decideRetry(input({ method: 'POST', keyed: false, outcome: lost })).retry, false);
      assert.equal(decideRetry(input({ method: 'PATCH', outcome: lost })).retry, false);
    });

    it("takes a proxy's 502 and 504 for a lost answer: sent again only when repeating is safe", () => {
      for (const status of [502, 504]) {
        assert.deepEqual(decideRetry(input({ method: 'GET', outcome: { status } })), { retry: true, delayMs: 100, reason: `answer ${status}` });
        assert.deepEqual(decideRetry(input({ method: 'POST', keyed: true, outcome: { status, retryAfter: '3' } })), {
          retry: true,
          delayMs: 3000,
          reason: `answer ${status}`,
        });
        assert.equal(decideRetry(input({ method: 'POST', keyed: false, outcome: { status } })).retry, false, `unkeyed POST, ${status}`);
        assert.equal(decideRetry(input({ method: 'PATCH', outcome: { status } })).retry, false, `PATCH, ${status}`);
      }
    });

    it('stops at the attempt limit and when the wait would pass the time budget', () => {
      assert.equal(decideRetry(input({ attempt: DEFAULT_RETRY.maxAttempts })).retry, false);
      assert.equal(decideRetry(input({ attempt: DEFAULT_RETRY.maxAttempts - 1 })).retry, true);
      const late = decideRetry(input({ elapsedMs: 59_000, outcome: { status: 429, retryAfter: '5' } }));
      assert.equal(late.retry, false);
      assert.match(late.reason, /would pass 60000 ms/);
    });
  });
});
