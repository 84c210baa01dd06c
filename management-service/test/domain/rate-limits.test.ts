import assert from 'node:assert/strict';
import { loginBlockSeconds, managementRateLimits } from '../../src/domain/rate-limits.ts';

const settings = { windowSeconds: 60, accessKey: 600, user: 120, address: 30 };
const machine = { tenantId: 'acme', kind: 'machine' as const, subject: 'A01J00000000000000000000001' };
const user = { tenantId: 'acme', kind: 'user' as const, subject: 'U01J00000000000000000000001' };

describe('rate limits: which budgets a request counts against', () => {
  it("counts a machine client's request against its access key within its tenant", () => {
    assert.deepEqual(managementRateLimits(settings, { operationId: 'listUsers', principal: machine, address: '10.0.0.1' }, {}), [
      { key: 'ak:acme:A01J00000000000000000000001', points: 600, windowSeconds: 60 },
    ]);
  });

  it("counts an end user's request against that user, with the tenant's own per-minute value scaled to the window", () => {
    const limits = managementRateLimits(
      { ...settings, windowSeconds: 30 },
      { operationId: 'getUser', principal: user, address: '10.0.0.1' },
      { user_requests_per_minute: 10 },
    );
    assert.deepEqual(limits, [{ key: 'u:acme:U01J00000000000000000000001', points: 5, windowSeconds: 30 }]);
  });

  it('the same ids in two tenants are two budgets', () => {
    const [a] = managementRateLimits(settings, { operationId: 'listUsers', principal: machine, address: '' }, {});
    const [b] = managementRateLimits(settings, { operationId: 'listUsers', principal: { ...machine, tenantId: 'other' }, address: '' }, {});
    assert.notEqual(a!.key, b!.key);
  });

  it('adds the client address on the token operations, whoever calls, and nothing on other open operations', () => {
    assert.deepEqual(managementRateLimits(settings, { operationId: 'login', principal: undefined, address: '10.0.0.1' }, {}), [
      { key: 'addr:10.0.0.1', points: 30, windowSeconds: 60 },
    ]);
    assert.equal(managementRateLimits(settings, { operationId: 'createUserToken', principal: machine, address: '10.0.0.1' }, {}).length, 2);
    assert.deepEqual(managementRateLimits(settings, { operationId: 'getJwks', principal: undefined, address: '10.0.0.1' }, {}), []);
  });

  it('a limit of 0 is no limit; a tenant value wins over the setting', () => {
    assert.deepEqual(managementRateLimits({ ...settings, accessKey: 0 }, { operationId: 'listUsers', principal: machine, address: '' }, {}), []);
    assert.equal(
      managementRateLimits({ ...settings, accessKey: 0 }, { operationId: 'listUsers', principal: machine, address: '' }, { requests_per_minute: 7 })[0]!.points,
      7,
    );
  });
});

describe('rate limits: the block after failed logins', () => {
  const block = { blockSeconds: 1, maxBlockSeconds: 300 };
  it('blocks nothing while the failures are free, then doubles from the first block up to the longest', () => {
    assert.deepEqual(
      [1, 5, 6, 7, 8, 9, 13, 14, 15, 1000].map((failures) => loginBlockSeconds(failures, 5, block)),
      [0, 0, 1, 2, 4, 8, 128, 256, 300, 300],
    );
  });
});
