import assert from 'node:assert/strict';
import { parseDecimal, toText } from '@platform/shared';
import { InvalidField, StateConflict } from '../../src/domain/errors.ts';
import { cashOf, checkCashEvent, checkDepositTarget, depositPatch, holdingsWithCash, withdrawalPatch } from '../../src/domain/funding.ts';
import type { Doc } from '../../src/domain/merge.ts';
import { optimizerRequest } from '../../src/domain/optimization-request.ts';

const NOW = '2026-01-02T03:04:05.678Z';
const portfolio = (over: Doc = {}, settings: Doc = { policy_id: 'Y1' }): Doc => ({
  base_currency: 'EUR',
  money_type: 'REAL_MONEY',
  archived: false,
  status: 'ACTIVE',
  funded_since: null,
  portfolio: {},
  config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: settings },
  ...over,
});

describe('funding rules (docs/adr/0009-funding-modes.md)', () => {
  it('accepts deposits into ACTIVE and WAITING_FOR_FUNDS portfolios only', () => {
    assert.equal(toText(checkDepositTarget(portfolio(), '10.50', 'EUR')), '10.5');
    assert.equal(toText(checkDepositTarget(portfolio({ status: 'WAITING_FOR_FUNDS' }), '1', 'EUR')), '1');
    for (const status of ['INACTIVE', 'WAITING_FOR_POLICY', 'WAITING_FOR_ACCOUNT']) {
      assert.throws(() => checkDepositTarget(portfolio({ status }), '1', 'EUR'), StateConflict, status);
    }
  });

  it('refuses archived and paper-money portfolios (409) and a currency other than the base currency (422)', () => {
    assert.throws(() => checkDepositTarget(portfolio({ archived: true }), '1', 'EUR'), StateConflict);
    assert.throws(() => checkDepositTarget(portfolio({ money_type: 'PAPER_MONEY' }), '1', 'EUR'), StateConflict);
    assert.throws(
      () => checkDepositTarget(portfolio(), '1', 'USD'),
      (e: unknown) => e instanceof InvalidField && e.loc.join('.') === 'body.data.currency',
    );
    assert.throws(() => checkCashEvent(portfolio({ money_type: 'PAPER_MONEY' }), '1', 'EUR'), StateConflict);
  });

  it('adds cash exactly: 0.1 + 0.2 is 0.3, and other holdings stay', () => {
    let doc = portfolio({ portfolio: { IE00B4L5Y983: 3 } });
    doc = { ...doc, portfolio: holdingsWithCash(doc, 'EUR', parseDecimal('0.1')) };
    doc = { ...doc, portfolio: holdingsWithCash(doc, 'EUR', parseDecimal('0.2')) };
    assert.deepEqual(doc.portfolio, { IE00B4L5Y983: 3, $EUR: 0.3 });
    assert.equal(toText(cashOf(doc, 'EUR')), '0.3');
    let many = portfolio();
    for (let i = 0; i < 1000; i++) many = { ...many, portfolio: holdingsWithCash(many, 'EUR', parseDecimal('0.01')) };
    assert.equal((many.portfolio as Doc).$EUR, 10);
  });

  it('sets funded_since once cash reaches the minimum funding amount, never before', () => {
    const below = depositPatch(portfolio(), parseDecimal('99.99'), '100', NOW);
    assert.deepEqual(below, { portfolio: { $EUR: 99.99 } });
    const reached = depositPatch(portfolio({ portfolio: { $EUR: 99.99 } }), parseDecimal('0.01'), '100', NOW);
    assert.deepEqual(reached, { portfolio: { $EUR: 100 }, funded_since: NOW });
    assert.equal(depositPatch(portfolio(), parseDecimal('0.01'), undefined, NOW).funded_since, NOW);
    assert.equal('funded_since' in depositPatch(portfolio({ funded_since: '2020-01-01T00:00:00.000Z' }), parseDecimal('5'), '1', NOW), false);
  });

  it('books a withdrawal against cash and the requested divest_amount', () => {
    const doc = portfolio({ portfolio: { $EUR: 1000.3 } }, { policy_id: 'Y1', divest_amount: 600 });
    assert.deepEqual(withdrawalPatch(doc, parseDecimal('500.1')), { portfolio: { $EUR: 500.2 }, config: { manager_settings: { divest_amount: 99.9 } } });
    assert.deepEqual(withdrawalPatch(doc, parseDecimal('700')).config, { manager_settings: { divest_amount: 0 } });
    const everything = portfolio({ portfolio: { $EUR: 10 } }, { policy_id: 'Y1', divest_amount: 1e100 });
    assert.deepEqual(withdrawalPatch(everything, parseDecimal('10')), { portfolio: { $EUR: 0 }, config: { manager_settings: { divest_amount: 0 } } });
    assert.throws(() => withdrawalPatch(doc, parseDecimal('1000.31')), StateConflict);
  });

  it('builds the optimizer request from the portfolio and its policy', () => {
    const doc = portfolio({ portfolio: { $EUR: 1000, IE00B4L5Y983: 2 } }, { policy_id: 'Y1', divest_amount: 250 });
    const policy = {
      config: {
        cash_buffer: 0.02,
        asset_class_bands: { EQUITY: [0.6, 0.8] },
        model_portfolio: { IE00B4L5Y983: 1 },
        fractional_shares: true,
        transaction_cost_bps: 5,
      },
    };
    const request = optimizerRequest({
      requestId: 'R',
      tenantId: 't',
      portfolio: { id: 'P1', doc },
      policy,
      optimizationId: 'O1',
      reason: 'DEPOSIT',
      now: NOW,
    });
    assert.deepEqual(request, {
      request_id: 'R',
      tenant_id: 't',
      portfolio_id: 'P1',
      optimization_id: 'O1',
      reason: 'DEPOSIT',
      requested_at: NOW,
      base_currency: 'EUR',
      holdings: { $EUR: 1000, IE00B4L5Y983: 2 },
      cash_buffer: 0.02,
      divest_amount: 250,
      asset_class_bands: { EQUITY: [0.6, 0.8] },
      model_portfolio: { IE00B4L5Y983: 1 },
      fractional_shares: true,
      transaction_cost_bps: 5,
      rebalancing_threshold: 0.05,
    });
  });
});
