import assert from 'node:assert/strict';
import { parseDecimal, toText } from '@platform/shared';
import { availableCash, checkHeldCash, heldCash, ordersNeed, ordersNotCovered, payoutToSend, type OpenInstruction } from '../../src/domain/cash-holds.ts';
import { StateConflict } from '../../src/domain/errors.ts';
import type { OrderLine } from '../../src/domain/execution.ts';
import { withdrawalPatch } from '../../src/domain/funding.ts';
import type { Doc } from '../../src/domain/merge.ts';

const robo = (cash: number, divest: number | null, holdings: Doc = {}): Doc => ({
  base_currency: 'EUR',
  money_type: 'REAL_MONEY',
  portfolio: { ...holdings, $EUR: cash },
  config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: divest === null ? {} : { divest_amount: divest } },
});
const line = (isin: string, shares: string, price: string, cost = '0'): OrderLine => ({ isin, shares, price, cost });
const d = parseDecimal;
const text = toText;

describe('cash held for what is with the broker (docs/adr/0022-execution-and-withdrawals.md)', () => {
  it('counts what orders need if all filled, exactly: buys and every cost, less sells, never below 0', () => {
    assert.equal(text(ordersNeed([line('A', '3', '33.33', '0.1'), line('B', '-1', '50', '0.2')])), '50.29');
    assert.equal(text(ordersNeed([line('A', '-3', '10', '0.5')])), '0');
    assert.equal(text(ordersNeed([])), '0');
  });

  it('holds a payout from when it is queued, orders from when they are sent, deposits never', () => {
    const open: OpenInstruction[] = [
      { kind: 'WITHDRAWAL', amount: '0.1', orders: null, sent: false },
      { kind: 'ORDERS', amount: null, orders: [line('A', '1', '0.2')], sent: true },
      { kind: 'ORDERS', amount: null, orders: [line('B', '1', '1000')], sent: false },
      { kind: 'DEPOSIT', amount: '500', orders: null, sent: true },
    ];
    assert.equal(text(heldCash(open)), '0.3');
    assert.equal(text(heldCash([])), '0');
    assert.equal(text(availableCash(robo(1, null), heldCash(open))), '0.7');
  });

  it('refuses a client’s write that lowers the cash below what is held, and nothing else', () => {
    const before = robo(100, null);
    assert.throws(() => checkHeldCash(before, robo(59.99, null), d('60')), StateConflict);
    assert.throws(() => checkHeldCash(before, { ...before, portfolio: { A: 1 } }, d('60')), StateConflict);
    checkHeldCash(before, robo(60, null), d('60'));
    checkHeldCash(before, robo(0, null), d('0'));
    // Raising the cash is never refused, even while it stays below what is held.
    checkHeldCash(robo(10, null), robo(20, null), d('60'));
  });

  it('sends a payout with no more than the divest_amount in force and the cash others do not hold; 0 when none is due', () => {
    assert.equal(text(payoutToSend(robo(100, 30), d('30'), d('0'))), '30');
    assert.equal(text(payoutToSend(robo(100, 20.5), d('30'), d('0'))), '20.5');
    // Raised meanwhile: no larger than queued (the cash held was checked for that).
    assert.equal(text(payoutToSend(robo(100, 80), d('30'), d('0'))), '30');
    assert.equal(text(payoutToSend(robo(100, 1e100), d('100'), d('0'))), '100');
    assert.equal(text(payoutToSend(robo(100, 30), d('30'), d('75'))), '25');
    assert.equal(text(payoutToSend(robo(100, 0), d('30'), d('0'))), '0');
    assert.equal(text(payoutToSend(robo(100, null), d('30'), d('0'))), '0');
  });

  it('lets orders go only when the cash not held covers what they need', () => {
    const orders = [line('A', '5', '10', '0.5')];
    assert.equal(ordersNotCovered(robo(100, null), orders, d('49.5')), undefined);
    assert.equal(ordersNotCovered(robo(100, null), orders, d('80')), 'the orders need 50.5 EUR and 20 EUR of the cash is available');
    assert.equal(ordersNotCovered(robo(10, null), orders, d('80')), 'the orders need 50.5 EUR and 0 EUR of the cash is available');
    // Sells need nothing: they go whatever is held.
    assert.equal(ordersNotCovered(robo(0, null), [line('A', '-5', '10', '0.5')], d('80')), undefined);
  });

  it('refuses a reported withdrawal that would spend held cash, and books one whose own amount was held', () => {
    assert.throws(() => withdrawalPatch(robo(100, null), d('50'), { held: d('60') }), /100 EUR in cash \(60 of it held/);
    assert.deepEqual(withdrawalPatch(robo(100, null), d('40'), { held: d('60') }).portfolio, { $EUR: 60 });
    assert.deepEqual(withdrawalPatch(robo(100, 30), d('30'), { mustCover: false }), {
      portfolio: { $EUR: 70 },
      config: { manager_settings: { divest_amount: 0 } },
    });
  });
});
