import assert from 'node:assert/strict';
import { changedPaths, mustBeCustomersChange, refusedFields } from '../../src/domain/customer-rights.ts';
import { FieldsNotPermitted } from '../../src/domain/errors.ts';

const portfolio = {
  name: 'Pension',
  owned_by_user_id: 'U1',
  portfolio: { $EUR: 100, IE00B4L5Y983: 2 },
  funded_since: null,
  config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_settings: { active: true, policy_id: 'Y1', tags: ['a'] } },
};

describe("customer rights (what a customer's token may change)", () => {
  it('finds changed paths as deep as both sides are objects; null and absent are alike', () => {
    assert.deepEqual(changedPaths({ a: 1, b: { c: 2, d: [1] } }, { a: 1, b: { c: 3, d: [1, 2] } }), [
      ['b', 'c'],
      ['b', 'd'],
    ]);
    assert.deepEqual(changedPaths({ a: null }, {}), []);
    assert.deepEqual(changedPaths({ a: { x: 1 } }, { a: 5 }), [['a']]);
    assert.deepEqual(changedPaths({ a: 1 }, { a: 1 }), []);
  });

  it("allows the customer's own fields", () => {
    const next = {
      ...portfolio,
      name: 'House',
      config: { ...portfolio.config, manager_settings: { ...portfolio.config.manager_settings, tags: ['b'], divest_amount: 10, goal_id: 'L1' } },
    };
    assert.deepEqual(refusedFields('portfolios', portfolio, next), []);
    assert.deepEqual(refusedFields('users', { first_name: 'A', language: null }, { first_name: 'B', language: 'de-DE' }), []);
  });

  it('names each refused field by the shortest part of its path under which nothing is allowed', () => {
    const next = {
      ...portfolio,
      portfolio: { $EUR: 1000000, IE00B4L5Y983: 2 },
      funded_since: '2026-01-01T00:00:00.000Z',
      config: { ...portfolio.config, manager_settings: { ...portfolio.config.manager_settings, active: false, policy_id: null } },
    };
    assert.deepEqual(refusedFields('portfolios', portfolio, next), [
      ['body', 'portfolio'],
      ['body', 'funded_since'],
      ['body', 'config', 'manager_settings', 'active'],
      ['body', 'config', 'manager_settings', 'policy_id'],
    ]);
    assert.deepEqual(refusedFields('portfolios', portfolio, { ...portfolio, config: { ...portfolio.config, manager: 'USER_MANAGED' } }), [
      ['body', 'config', 'manager'],
    ]);
    assert.deepEqual(refusedFields('users', { status: 'WAITING_FOR_VERIFICATION' }, { status: 'ACTIVE' }), [['body', 'status']]);
  });

  it('lets the owner make the choice on an optimization, and nothing else of it (docs/adr/0021-optimizations.md)', () => {
    const optimization = { portfolio_id: 'P1', status: 'SUCCESS', is_recommended: true, owner_choice: null, orders: { IE00B4L5Y983: { shares: 1 } } };
    for (const choice of ['ACCEPT', 'REJECT', 'REOPTIMIZE'])
      assert.deepEqual(refusedFields('optimizations', optimization, { ...optimization, owner_choice: choice }), []);
    assert.deepEqual(refusedFields('optimizations', optimization, { ...optimization, owner_choice: 'ACCEPT', status: 'FAILURE', orders: {} }), [
      ['body', 'status'],
      ['body', 'orders'],
    ]);
    assert.deepEqual(refusedFields('optimizations', optimization, { ...optimization, execution_status: 'EXECUTED' }), [['body', 'execution_status']]);
  });

  it('leaves a type it does not list read-only for customers', () => {
    assert.deepEqual(refusedFields('transactions', { quantity: '1' }, { quantity: '2' }), [['body', 'quantity']]);
    assert.deepEqual(refusedFields('goals', { name: 'a' }, { name: 'b' }), [['body', 'name']]);
  });

  it('lets machine clients change anything, and throws a 403 error with every refused field for a customer', () => {
    const next = { ...portfolio, owned_by_user_id: 'U2', archived: true };
    assert.doesNotThrow(() => mustBeCustomersChange({ tenantId: 't', kind: 'machine', subject: 'A1' }, 'portfolios', portfolio, next));
    assert.throws(
      () => mustBeCustomersChange({ tenantId: 't', kind: 'user', subject: 'U1' }, 'portfolios', portfolio, next),
      (error: unknown) =>
        error instanceof FieldsNotPermitted &&
        JSON.stringify(error.locs) ===
          JSON.stringify([
            ['body', 'owned_by_user_id'],
            ['body', 'archived'],
          ]),
    );
  });
});
