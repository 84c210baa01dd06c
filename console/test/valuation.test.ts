import assert from 'node:assert/strict';
import { allocation } from '../src/lib/allocation.ts';
import { currenciesToConvert, rateAsOf, valueHoldings, type RatePoint } from '../src/lib/valuation.ts';

/** A EUR/USD series: `rate` USD per 1 EUR on each date given. */
const series = (entries: [string, number][]): RatePoint[] => entries.map(([date, rate]) => ({ date, rate }));

describe('console: holdings valued in the base currency at the reference rates', () => {
  const instruments = {
    IE00B4L5Y983: { name: 'World', price: 100, currency: 'EUR', price_date: '2026-11-27' },
    US0378331005: { name: 'Apple', price: 220, currency: 'USD', price_date: '2026-11-26' },
    JP3633400001: { name: 'Toyota', price: 3000, currency: 'JPY', price_date: '2026-11-27' },
  };
  const usd = series([
    ['2026-11-24', 1.05],
    ['2026-11-25', 1.25],
    ['2026-11-27', 1.6],
  ]);

  it('takes the latest rate on or before the date, and none when the latest is older than the bound', () => {
    assert.deepEqual(rateAsOf(usd, '2026-11-26'), { date: '2026-11-25', rate: 1.25 });
    assert.deepEqual(rateAsOf(usd, '2026-11-27'), { date: '2026-11-27', rate: 1.6 });
    assert.equal(rateAsOf(usd, '2026-11-23'), undefined, 'nothing before the first rate');
    assert.deepEqual(rateAsOf(usd, '2026-12-02'), { date: '2026-11-27', rate: 1.6 }, '5 days old: still in bound');
    assert.equal(rateAsOf(usd, '2026-12-03'), undefined, '6 days old: stale');
    assert.equal(rateAsOf(series([['2026-11-27', 0]]), '2026-11-27'), undefined, 'a rate of 0 is no rate');
    assert.equal(rateAsOf(undefined, '2026-11-27'), undefined);
  });

  it('converts each value at the rate of its price date (cash at the date of the valuation), the total in the base currency', () => {
    const { rows, total, missing, totals } = valueHoldings({ IE00B4L5Y983: 10, US0378331005: 5, $USD: 240, $EUR: 50 }, instruments, {
      base: 'EUR',
      rates: { USD: usd },
      asOf: '2026-11-28',
    });
    const byKey = new Map(rows.map((r) => [r.key, r]));
    assert.equal(byKey.get('US0378331005')!.value, 1100, 'in its own currency');
    assert.equal(byKey.get('US0378331005')!.baseValue, 880, "the price's date takes the 25th");
    assert.deepEqual(byKey.get('US0378331005')!.rate, { pair: 'EUR/USD', date: '2026-11-25', rate: 1.25 });
    assert.equal(byKey.get('$USD')!.baseValue, 150, 'cash at the newest rate');
    assert.equal(byKey.get('IE00B4L5Y983')!.baseValue, 1000);
    assert.equal(byKey.get('IE00B4L5Y983')!.rate, undefined, 'the base currency needs no rate');
    assert.equal(total, 1000 + 880 + 150 + 50);
    assert.deepEqual(missing, []);
    assert.deepEqual(totals, { EUR: 1050, USD: 1340 });
    assert.deepEqual(
      rows.map((r) => r.key),
      ['IE00B4L5Y983', 'US0378331005', '$USD', '$EUR'],
      'ordered by the value in the base currency, cash last',
    );
  });

  it('says a value has no rate instead of taking 1, and leaves it out of the total', () => {
    const { rows, total, missing } = valueHoldings({ IE00B4L5Y983: 1, JP3633400001: 100, $USD: 10 }, instruments, {
      base: 'EUR',
      rates: { USD: series([['2026-11-10', 1.1]]) },
      asOf: '2026-11-28',
    });
    const byKey = new Map(rows.map((r) => [r.key, r]));
    assert.equal(byKey.get('JP3633400001')!.missingRate, 'EUR/JPY');
    assert.equal(byKey.get('JP3633400001')!.baseValue, undefined);
    assert.equal(byKey.get('JP3633400001')!.value, 300_000);
    assert.equal(byKey.get('$USD')!.missingRate, 'EUR/USD', 'a stale rate is missing too');
    assert.equal(total, 100);
    assert.deepEqual(missing, ['EUR/JPY', 'EUR/USD']);
  });

  it('names the currencies to convert, cash included, the base and unpriced instruments left out', () => {
    assert.deepEqual(currenciesToConvert({ IE00B4L5Y983: 1, US0378331005: 1, JP3633400001: 1, $GBP: 1, $EUR: 1, XS0000000000: 1 }, instruments, 'EUR'), [
      'GBP',
      'JPY',
      'USD',
    ]);
    assert.deepEqual(currenciesToConvert({ IE00B4L5Y983: 1, $USD: 1 }, instruments, 'USD'), ['EUR']);
  });

  it('weighs converted positions in the allocation and names those without a rate apart', () => {
    const { rows } = valueHoldings({ IE00B4L5Y983: 10, US0378331005: 5, JP3633400001: 1 }, instruments, {
      base: 'EUR',
      rates: { USD: usd },
      asOf: '2026-11-28',
    });
    const result = allocation(rows, 'EUR', { IE00B4L5Y983: 0.5, US0378331005: 0.5 });
    assert.equal(result.total, 1880);
    assert.deepEqual(
      result.rows.map((r) => [r.key, r.current]),
      [
        ['IE00B4L5Y983', 1000 / 1880],
        ['US0378331005', 880 / 1880],
      ],
    );
    assert.deepEqual(result.unweighed, ['JP3633400001']);
  });
});
