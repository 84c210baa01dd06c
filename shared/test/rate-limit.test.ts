import assert from 'node:assert/strict';
import { perWindow, rateLimitHeaders, rateLimitKey, rateLimitedProblem, type RateLimitState } from '../src/http/rate-limit.ts';

const state = (points: number, windowSeconds: number, remaining: number, resetSeconds: number, refused = false): RateLimitState => ({
  limit: { key: `k${points}`, points, windowSeconds },
  remaining,
  resetSeconds,
  refused,
});

describe('rate-limit headers', () => {
  it('names every policy and the state of the one closest to refusing', () => {
    assert.deepEqual(rateLimitHeaders([state(600, 60, 12, 7), state(30, 60, 3, 50)]), {
      'RateLimit-Policy': '600;w=60, 30;w=60',
      RateLimit: 'limit=30, remaining=3, reset=50',
    });
    assert.deepEqual(rateLimitHeaders([]), {});
  });

  it('answers 429 rate_limited with Retry-After of the longest refusing wait', () => {
    const problem = rateLimitedProblem([state(600, 60, 0, 7, true), state(30, 60, 0, 20, true), state(5, 3600, 4, 3000)]);
    assert.equal(problem.status, 429);
    assert.equal(problem.code, 'rate_limited');
    assert.equal(problem.extra.headers?.['Retry-After'], '20');
    assert.equal(problem.extra.headers?.RateLimit, 'limit=30, remaining=0, reset=20');
  });

  it('keeps keys within the store column: a long part becomes its digest', () => {
    assert.equal(rateLimitKey('ak', 'acme', 'A01'), 'ak:acme:A01');
    const long = rateLimitKey('ak', 'x'.repeat(1000));
    assert.ok(long.length < 80);
    assert.notEqual(long, rateLimitKey('ak', 'y'.repeat(1000)));
  });

  it('scales a per-minute value to a window, never below one request', () => {
    assert.equal(perWindow(600, 60), 600);
    assert.equal(perWindow(600, 1), 10);
    assert.equal(perWindow(1, 1), 1);
  });
});
