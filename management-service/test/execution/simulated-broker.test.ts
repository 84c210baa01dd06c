import assert from 'node:assert/strict';
import { SimulatedBrokerFailure, simulatedBroker } from '../../src/broker/simulated.ts';
import type { OrderRequest } from '../../src/broker/broker.ts';
import { seededRandom } from '@platform/test-support/random';

const request = (id: string): OrderRequest => ({
  id,
  tenantId: 't',
  portfolioId: 'P',
  currency: 'EUR',
  orders: [
    { isin: 'IE00B4L5Y983', shares: '3', price: '33.33', currency: 'EUR' },
    { isin: 'IE00B3F81409', shares: '-1.5', price: '10', currency: 'EUR' },
    { isin: 'US4642872000', shares: '2', price: '512.25', currency: 'USD' },
  ],
});

describe('the simulated broker (docs/adr/0022-execution-and-withdrawals.md)', () => {
  it('fills every order at the given price in its currency, settles cash moves both ways, and answers a repeated id the same', async () => {
    const broker = simulatedBroker();
    const first = await broker.placeOrders(request('B1'));
    assert.deepEqual(first, {
      status: 'FILLED',
      fills: [
        { isin: 'IE00B4L5Y983', shares: '3', price: '33.33', currency: 'EUR', reference: 'SIM-B1-IE00B4L5Y983' },
        { isin: 'IE00B3F81409', shares: '-1.5', price: '10', currency: 'EUR', reference: 'SIM-B1-IE00B3F81409' },
        { isin: 'US4642872000', shares: '2', price: '512.25', currency: 'USD', reference: 'SIM-B1-US4642872000' },
      ],
    });
    assert.deepEqual(await broker.placeOrders(request('B1')), first);
    for (const direction of ['TO_SUBACCOUNT', 'TO_HOUSE_ACCOUNT'] as const) {
      const move = { id: `B-${direction}`, tenantId: 't', portfolioId: 'P', direction, amount: '10', currency: 'EUR' };
      assert.deepEqual(await broker.moveCash(move), { status: 'SETTLED', reference: `SIM-B-${direction}` });
    }
  });

  it('refuses at its refuse rate, and keeps the refusal for the id', async () => {
    const broker = simulatedBroker({ refuseRate: 1 });
    assert.deepEqual(await broker.placeOrders(request('B2')), { status: 'REJECTED', reason: 'simulated refusal of the orders' });
    const move = { id: 'B3', tenantId: 't', portfolioId: 'P', direction: 'TO_HOUSE_ACCOUNT' as const, amount: '1', currency: 'EUR' };
    assert.equal((await broker.moveCash(move)).status, 'REJECTED');
    // Decided once per id: a broker that would now fill still answers the refusal it gave.
    let refuse = true;
    const fickle = simulatedBroker({ refuseRate: 0.5, random: () => (refuse ? 0 : 0.99) });
    assert.equal((await fickle.placeOrders(request('B4'))).status, 'REJECTED');
    refuse = false;
    assert.equal((await fickle.placeOrders(request('B4'))).status, 'REJECTED');
    assert.equal((await fickle.placeOrders(request('B5'))).status, 'FILLED');
  });

  it('fails transiently at its failure rate, before or after executing, and still executes each id once', async () => {
    const broker = simulatedBroker({ failureRate: 0.5, refuseRate: 0.3, random: seededRandom(7) });
    let failures = 0;
    const answers = new Map<string, string>();
    for (let i = 0; i < 40; i++) {
      const id = `B-${i % 10}`;
      try {
        const result = await broker.placeOrders(request(id));
        const text = JSON.stringify(result);
        if (answers.has(id)) assert.equal(text, answers.get(id), `${id} answers as first executed`);
        answers.set(id, text);
      } catch (error) {
        assert.ok(error instanceof SimulatedBrokerFailure);
        failures++;
      }
    }
    assert.ok(failures >= 10 && failures <= 30, `about half of 40 calls fail: ${failures}`);
    assert.equal(answers.size, 10);
  });
});
