import assert from 'node:assert/strict';
import { BookedByService } from '../../src/domain/errors.ts';
import { checkClientCreate, checkClientDelete, checkClientUpdate } from '../../src/domain/fx-transactions.ts';
import type { Doc } from '../../src/domain/merge.ts';

/** A stored transaction; `over` changes what the case is about. */
const stored = (over: Doc = {}): Doc => ({
  external_id: null,
  type: 'CASH',
  status: 'SETTLED',
  quantity: '100.5',
  currency: 'EUR',
  instrument_id: '$EUR',
  unit_price: null,
  optimization_id: null,
  datetime: '2026-11-02T10:00:00.000Z',
  portfolio_id: 'P01M80KHFCGRHVVWPCXR0XBGW3X',
  ...over,
});

/** A conversion as the service's execution books it: 201.5 USD bought for 185.38 EUR. */
const booked = (over: Doc = {}): Doc =>
  stored({
    type: 'FX',
    quantity: '201.5',
    currency: 'USD',
    instrument_id: '$USD',
    unit_price: '0.92',
    optimization_id: 'O01M80KHFCGRHVVWPCXR0XBGW3X',
    conversion: { from_currency: 'EUR', from_amount: '185.38', to_currency: 'USD', to_amount: '201.5', rate: '0.92', cost: '0', cost_currency: 'EUR' },
    ...over,
  });

/** The locs a rule refuses with, or undefined when it allows the write. */
function refusal(rule: () => void): (string | number)[][] | undefined {
  try {
    rule();
    return undefined;
  } catch (error) {
    assert.ok(error instanceof BookedByService, String(error));
    return error.locs;
  }
}

describe('FX transactions are the service’s (docs/adr/0022-execution-and-withdrawals.md)', () => {
  it('refuses a client’s FX create at its type, whatever else it carries, and allows every other type', () => {
    assert.deepEqual(
      refusal(() => checkClientCreate({ type: 'FX', status: 'SETTLED', quantity: '100', currency: 'USD', instrument_id: '$USD', unit_price: '0.92' })),
      [['body', 'type']],
    );
    assert.deepEqual(
      refusal(() => checkClientCreate({ type: 'FX', status: 'PLANNED', quantity: '0', currency: 'EUR' })),
      [['body', 'type']],
    );
    for (const type of ['CASH', 'ORDER', 'FEE', 'DIVIDEND', 'INTEREST', 'TAX'])
      assert.equal(
        refusal(() => checkClientCreate({ type })),
        undefined,
        type,
      );
  });

  it('lets a booked conversion change its external_id only, naming each other field changed', () => {
    assert.equal(
      refusal(() => checkClientUpdate(booked(), booked({ external_id: 'brk-fx-1' }))),
      undefined,
    );
    assert.equal(
      refusal(() => checkClientUpdate(booked(), booked())),
      undefined,
      'a patch that changes nothing',
    );
    assert.deepEqual(
      refusal(() => checkClientUpdate(booked(), booked({ quantity: '5' }))),
      [['body', 'quantity']],
    );
    assert.deepEqual(
      refusal(() => checkClientUpdate(booked(), booked({ type: 'CASH', status: 'CANCELLED', external_id: 'x' }))),
      [
        ['body', 'type'],
        ['body', 'status'],
      ],
    );
    assert.deepEqual(
      refusal(() => checkClientUpdate(booked(), booked({ unit_price: '0.93' }))),
      [['body', 'unit_price']],
    );
  });

  it('refuses a change that makes or leaves another transaction FX, and allows one that takes it away from FX', () => {
    assert.deepEqual(
      refusal(() => checkClientUpdate(stored(), stored({ type: 'FX', unit_price: '0.9' }))),
      [['body', 'type']],
    );
    const madeBefore = stored({ type: 'FX', currency: 'USD', instrument_id: '$USD', unit_price: '0.92' });
    assert.deepEqual(
      refusal(() => checkClientUpdate(madeBefore, { ...madeBefore, status: 'CANCELLED' })),
      [['body', 'type']],
    );
    assert.equal(
      refusal(() => checkClientUpdate(madeBefore, { ...madeBefore, type: 'CASH' })),
      undefined,
    );
    assert.equal(
      refusal(() => checkClientUpdate(stored(), stored({ status: 'CANCELLED', quantity: '-50' }))),
      undefined,
    );
  });

  it('refuses deleting a booked conversion at the path, and allows deleting any other transaction', () => {
    assert.deepEqual(
      refusal(() => checkClientDelete(booked())),
      [['path', 'transaction_id']],
    );
    assert.equal(
      refusal(() => checkClientDelete(stored())),
      undefined,
    );
    assert.equal(
      refusal(() => checkClientDelete(stored({ type: 'FX', currency: 'USD', instrument_id: '$USD' }))),
      undefined,
      'an FX without conversion (made before the rule)',
    );
    assert.equal(
      refusal(() => checkClientDelete(booked({ conversion: null }))),
      undefined,
    );
  });
});
