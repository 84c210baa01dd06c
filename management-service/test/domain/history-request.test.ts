import assert from 'node:assert/strict';
import { InvalidField } from '../../src/domain/errors.ts';
import type { Doc } from '../../src/domain/merge.ts';
import { messageCheck } from '@platform/shared';
import { HISTORY_REQUEST_LIMITS, historyPeriod, historyRequest, policyModel, refusalLoc } from '../../src/domain/history-request.ts';

const at = (iso: string) => new Date(iso);
const base = {
  tenantId: 'acme',
  portfolioId: 'P01JP9ZMQCN0XG3YNRRKJ6T0FZ3',
  baseCurrency: 'EUR',
  frequency: 'D' as const,
  format: 'json' as const,
};

describe('the history request built from a portfolio', () => {
  it('defaults the period to the creation day and today (UTC), and refuses to before from at to', () => {
    assert.deepEqual(historyPeriod({}, at('2025-03-04T23:59:59.999Z'), at('2026-01-02T00:00:00.000Z')), { from: '2025-03-04', to: '2026-01-02' });
    assert.deepEqual(historyPeriod({ from: '2025-06-01' }, at('2025-03-04T10:00:00Z'), at('2026-01-02T10:00:00Z')), { from: '2025-06-01', to: '2026-01-02' });
    assert.throws(
      () => historyPeriod({ from: '2025-06-02', to: '2025-06-01' }, at('2025-01-01T00:00:00Z'), at('2026-01-01T00:00:00Z')),
      (e: unknown) => e instanceof InvalidField && e.loc.join('.') === 'query.to',
    );
  });

  it('sends the last version written on or before the first day and those within the period; the cash moves after the first day', () => {
    const request = historyRequest({
      ...base,
      period: { from: '2025-01-10', to: '2025-01-20' },
      versions: [
        { version_at: at('2025-01-02T09:00:00Z'), holdings: {} },
        { version_at: at('2025-01-10T18:00:00Z'), holdings: { $EUR: 100 } },
        { version_at: at('2025-01-15T09:00:00Z'), holdings: { $EUR: 50, IE00B4L5Y983: 2, note: 'x' } },
        { version_at: at('2025-01-21T09:00:00Z'), holdings: { $EUR: 0 } },
      ],
      cash: [
        { quantity: '-50.00', currency: 'EUR', datetime: '2025-01-15T10:00:00+01:00' },
        { quantity: '100.00', currency: 'EUR', datetime: '2025-01-10T17:00:00.000Z' },
        { quantity: '5.00', currency: 'EUR', datetime: '2025-01-21T00:00:00.000Z' },
      ],
    });
    assert.deepEqual(request.versions, [
      { from: '2025-01-10T18:00:00.000Z', holdings: { $EUR: 100 } },
      { from: '2025-01-15T09:00:00.000Z', holdings: { $EUR: 50, IE00B4L5Y983: 2 } },
    ]);
    // The deposit on the first day is in its value already; the one after the last is outside.
    assert.deepEqual(request.flows, [{ at: '2025-01-15T09:00:00.000Z', amount: '-50.00', currency: 'EUR' }]);
    assert.equal(request.model, undefined);
  });

  it("takes the policy's model weights with the rest in cash, and refuses a portfolio without one at model", () => {
    assert.deepEqual(policyModel({ config: { model_portfolio: { IE00B4L5Y983: 0.7, IE00B3F81409: 0.2 } } }).weights, { IE00B4L5Y983: 0.7, IE00B3F81409: 0.2 });
    assert.ok(Math.abs(policyModel({ config: { model_portfolio: { IE00B4L5Y983: 0.7, IE00B3F81409: 0.2 } } }).cash_weight - 0.1) < 1e-12);
    assert.equal(policyModel({ config: { model_portfolio: { A: 0.1, B: 0.2, C: 0.7 } } }).cash_weight, 0, 'a float sum a hair above 1 is no cash');
    for (const policy of [undefined, { config: {} }, { config: { model_portfolio: {} } }] as (Doc | undefined)[]) {
      assert.throws(
        () => policyModel(policy),
        (e: unknown) => e instanceof InvalidField && e.loc.join('.') === 'query.model',
      );
    }
  });

  it('points a refusal at the query parameter it names, or at the portfolio for what is in its versions or cash', () => {
    assert.deepEqual(refusalLoc(['from']), ['query', 'from']);
    assert.deepEqual(refusalLoc(['frequency']), ['query', 'frequency']);
    assert.deepEqual(refusalLoc(['model', 'weights', 'IE00B4L5Y983']), ['query', 'model', 'weights', 'IE00B4L5Y983']);
    assert.deepEqual(refusalLoc(['versions', 3, 'holdings', 'ZZ0000000000']), ['path', 'portfolio_id', 'versions', 3, 'holdings', 'ZZ0000000000']);
  });

  describe('bounded before it is sent', () => {
    const period = { from: '2025-01-01', to: '2025-12-31' };
    const versions = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ version_at: new Date(Date.UTC(2025, 0, 2) + i * 60_000), holdings: { $EUR: i } }));
    const cash = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ quantity: '1.00', currency: 'EUR', datetime: new Date(Date.UTC(2025, 0, 2) + i * 60_000).toISOString() }));

    it('refuses more versions or cash moves in the period than the limit, at from, naming the period', () => {
      const limits = { versions: 3, flows: 2 };
      assert.equal(historyRequest({ ...base, period, versions: versions(3), cash: cash(2), limits }).versions.length, 3);
      const refused = (input: Parameters<typeof historyRequest>[0], message: string) =>
        assert.throws(
          () => historyRequest(input),
          (e: unknown) => e instanceof InvalidField && e.loc.join('.') === 'query.from' && assert.equal(e.msg, message) === undefined,
        );
      refused(
        { ...base, period, versions: versions(4), cash: [], limits },
        '4 versions of the portfolio from 2025-01-01 to 2025-12-31; at most 3 in one history: ask for a shorter period',
      );
      refused(
        { ...base, period, versions: versions(1), cash: cash(3), limits },
        '3 cash moves of the portfolio from 2025-01-01 to 2025-12-31; at most 2 in one history: ask for a shorter period',
      );
    });

    it("uses the contract's maxItems: a request at the limits passes its check, one more version does not", () => {
      const check = messageCheck('HistoryRequest');
      const atLimit = historyRequest({ ...base, period, versions: versions(HISTORY_REQUEST_LIMITS.versions), cash: cash(HISTORY_REQUEST_LIMITS.flows) });
      assert.equal(check(atLimit).ok, true);
      assert.equal(check({ ...atLimit, versions: [...atLimit.versions, atLimit.versions.at(-1)!] }).ok, false);
      assert.equal(check({ ...atLimit, flows: [...atLimit.flows, atLimit.flows.at(-1)!] }).ok, false);
      assert.throws(() => historyRequest({ ...base, period, versions: versions(HISTORY_REQUEST_LIMITS.versions + 1), cash: [] }), InvalidField);
    });
  });
});
