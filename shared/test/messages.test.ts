import assert from 'node:assert/strict';
import { messageCheck } from '../src/messages.ts';

describe('message checks against the AsyncAPI contract', () => {
  const check = messageCheck('OptimizerResult');
  const result = {
    request_id: '01JABCDEFGHJKMNPQRSTVWXYZ0',
    tenant_id: 'demo',
    portfolio_id: 'P01JABCDEFGHJKMNPQRSTVWXYZ0',
    optimization_id: 'O01JABCDEFGHJKMNPQRSTVWXYZ0',
    status: 'SUCCESS',
    is_recommended: true,
    orders: { IE00B4L5Y983: { shares: 3, expected_share_price: 87.5, expected_transaction_cost: 0.26 } },
    solved_at: '2026-01-02T03:04:05.000Z',
  };

  it('accepts a message of the schema', () => {
    const checked = check(result);
    assert.equal(checked.ok, true);
  });

  it('refuses a message that breaks the schema, saying where', () => {
    const checked = check({ ...result, status: 'DONE', orders: { IE00B4L5Y983: { shares: 'three' } } });
    assert.equal(checked.ok, false);
    assert.match(checked.ok ? '' : checked.errors, /status/);
    assert.match(checked.ok ? '' : checked.errors, /orders/);
  });

  it('refuses what is not an object', () => {
    assert.equal(check('{}').ok, false);
    assert.equal(check(null).ok, false);
  });
});
