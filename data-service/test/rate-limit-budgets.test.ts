import assert from 'node:assert/strict';
import { dataRateLimits } from '../src/domain/rate-limits.ts';

describe('rate limits: which budget a data request counts against', () => {
  it('counts a data request against its API key within its tenant, none without a caller', () => {
    assert.deepEqual(dataRateLimits({ windowSeconds: 60, apiKey: 100 }, { tenantId: 'acme', apiKeyId: 'K01' }, {}), [
      { key: 'api:acme:K01', points: 100, windowSeconds: 60 },
    ]);
    assert.equal(dataRateLimits({ windowSeconds: 60, apiKey: 100 }, { tenantId: 'acme', apiKeyId: 'K01' }, { requests_per_minute: 3 })[0]!.points, 3);
    assert.deepEqual(dataRateLimits({ windowSeconds: 60, apiKey: 100 }, undefined, {}), []);
    assert.deepEqual(dataRateLimits({ windowSeconds: 60, apiKey: 0 }, { tenantId: 'acme', apiKeyId: 'K01' }, {}), []);
  });
});
