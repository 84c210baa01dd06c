import assert from 'node:assert/strict';
import { orderRows } from '../src/lib/orders.ts';
import { transactionLine } from '../src/lib/transactions.ts';

describe('console: orders and transactions in other currencies', () => {
  it('reads an FX transaction as its conversion: both sides, the rate of the other currency and the cost', () => {
    const buyUsd = transactionLine({
      type: 'FX',
      instrument_id: '$USD',
      currency: 'USD',
      quantity: '1080.00',
      unit_price: '0.925925925926',
      conversion: {
        from_currency: 'EUR',
        from_amount: '1000.00',
        to_currency: 'USD',
        to_amount: '1080.00',
        rate: '0.925925925926',
        cost: '0.50',
        cost_currency: 'EUR',
      },
    });
    assert.deepEqual(buyUsd, {
      position: '$EUR → $USD',
      amount: '1000.00 EUR → 1080.00 USD',
      detail: '1 USD = 0.925925925926 EUR, cost 0.50 EUR',
    });
    const sellUsd = transactionLine({
      type: 'FX',
      conversion: {
        from_currency: 'USD',
        from_amount: '540.00',
        to_currency: 'EUR',
        to_amount: '500.00',
        rate: '0.925925925926',
        cost: '0.25',
        cost_currency: 'EUR',
      },
    });
    assert.equal(sellUsd.detail, '1 USD = 0.925925925926 EUR, cost 0.25 EUR', 'the rate names the other currency whichever way');
    assert.equal(sellUsd.position, '$USD → $EUR');
  });

  it('reads other transactions by their position and quantity, an order with its price', () => {
    assert.deepEqual(transactionLine({ type: 'CASH', instrument_id: '$EUR', currency: 'EUR', quantity: '-200.00', unit_price: null }), {
      position: '$EUR',
      amount: '-200.00',
      detail: '',
    });
    assert.deepEqual(transactionLine({ type: 'ORDER', instrument_id: 'US0378331005', currency: 'USD', quantity: '3', unit_price: '221.5' }), {
      position: 'US0378331005',
      amount: '3',
      detail: 'at 221.5 USD',
    });
    // An FX type without its conversion (not one the service booked) falls back to the plain line.
    assert.equal(transactionLine({ type: 'FX', currency: 'USD', quantity: '10' }).position, '$USD');
  });

  it("keeps an order's currency fields beside its execution status", () => {
    const rows = orderRows(
      {
        US0378331005: {
          shares: 3,
          expected_share_price: 200,
          expected_transaction_cost: 0.6,
          currency: 'USD',
          expected_share_price_in_currency: 216,
          fx_rate: 0.925925925926,
          expected_fx_cost: 0.3,
        },
        IE00B4L5Y983: { shares: -2, expected_share_price: 100, expected_transaction_cost: 0.2 },
      },
      [{ type: 'ORDER', instrument_id: 'US0378331005', status: 'EXECUTED' }],
      'PARTIALLY_EXECUTED',
    );
    assert.deepEqual(
      rows.map((r) => [r.isin, r.side, r.status, r.currency, r.fx_rate, r.expected_fx_cost]),
      [
        ['IE00B4L5Y983', 'sell', 'PARTIALLY_EXECUTED', undefined, undefined, undefined],
        ['US0378331005', 'buy', 'EXECUTED', 'USD', 0.925925925926, 0.3],
      ],
    );
  });
});
