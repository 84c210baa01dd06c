import assert from 'node:assert/strict';
import { InvalidValue, UnknownValue } from '../../src/domain/errors.ts';
import { portfolioHistory } from '../../src/history/calculate.ts';
import type { HistoryRequest, PriceTable } from '../../src/history/input.ts';
import { toCents, toReturn } from '../../src/history/rounding.ts';
import { xirr } from '../../src/history/xirr.ts';
import { day, fxTable, historyRequest, noon, priceTable, weekdays } from './fixtures.ts';

// The history calculator on cases computed by hand (docs/adr/0058-portfolio-history.md).

const close = (actual: number | null | undefined, expected: number, tolerance = 1e-8) =>
  assert.ok(actual !== null && actual !== undefined && Math.abs(actual - expected) <= tolerance, `${actual} is not ${expected}`);
const column = <K extends keyof ReturnType<typeof portfolioHistory>['points'][number]>(answer: ReturnType<typeof portfolioHistory>, key: K) =>
  answer.points.map((p) => p[key]);

describe('portfolio history: hand-computed cases', () => {
  const days = weekdays('2026-01-05', 5); // Mon 5 … Fri 9 January

  it('a deposit mid-period adds to the value and net deposits, not to the time-weighted return', () => {
    const prices = priceTable(days, { A: { closes: [100, 110, 110, 121, 121] } });
    const answer = portfolioHistory(
      historyRequest(days, {
        versions: [
          { from: '2026-01-05T10:00:00Z', holdings: { A: '10' } },
          { from: '2026-01-07T12:00:01Z', holdings: { A: '10', $EUR: '500.00' } },
        ],
        flows: [{ at: '2026-01-07T12:00:00Z', amount: '500.00', currency: 'EUR' }],
      }),
      prices,
      fxTable(),
    );
    assert.deepEqual(column(answer, 'value'), [1000, 1100, 1600, 1710, 1710]);
    assert.deepEqual(column(answer, 'cash'), [0, 0, 500, 500, 500]);
    assert.deepEqual(column(answer, 'net_deposits'), [0, 0, 500, 500, 500]);
    // 1.1 × (1600 − 500) / 1100 × 1710 / 1600 = 1.175625
    assert.deepEqual(column(answer, 'twr'), [0, 0.1, 0.1, 0.175625, 0.175625]);
    assert.equal(answer.summary.twr, 0.175625);
    assert.equal(answer.summary.net_deposits, 500);
  });

  it('a withdrawal counts at the end of its day; the drawdown is measured on the index', () => {
    const prices = priceTable(days, { A: { closes: [100, 120, 120, 90, 90] } });
    const answer = portfolioHistory(
      historyRequest(days, {
        versions: [
          { from: noon(days[0]!), holdings: { A: 10, $EUR: 200 } },
          { from: noon(days[2]!), holdings: { A: 10 } },
        ],
        flows: [{ at: noon(days[2]!), amount: '-200', currency: 'EUR' }],
      }),
      prices,
      fxTable(),
    );
    assert.deepEqual(column(answer, 'value'), [1200, 1400, 1200, 900, 900]);
    assert.deepEqual(column(answer, 'net_deposits'), [0, 0, -200, -200, -200]);
    // 1400/1200 = 7/6; (1200 + 200)/1400 = 1; 900/1200 = 0.75 → 0.875
    assert.deepEqual(column(answer, 'twr'), [0, 0.16666667, 0.16666667, -0.125, -0.125]);
    // The value fell from 1400 to 900 (−35.7 %), of which 200 was withdrawn: the index fell 25 %.
    assert.deepEqual(column(answer, 'drawdown'), [0, 0, 0, -0.25, -0.25]);
    assert.equal(answer.summary.max_drawdown, -0.25);
  });

  it('a price jump and a recovery: drawdown from the running peak, back to 0 at a new one', () => {
    const prices = priceTable(days, { A: { closes: [100, 120, 90, 96, 130] } });
    const answer = portfolioHistory(historyRequest(days, { versions: [{ from: noon(days[0]!), holdings: { A: '1.5' } }] }), prices, fxTable());
    assert.deepEqual(column(answer, 'value'), [150, 180, 135, 144, 195]);
    assert.deepEqual(column(answer, 'drawdown'), [0, 0, -0.25, -0.2, 0]);
    assert.deepEqual(column(answer, 'twr'), [0, 0.2, -0.1, -0.04, 0.3]);
  });

  it('an instrument and cash in USD in a EUR portfolio follow the USD rate', () => {
    const prices = priceTable(days.subarray(0, 4), { US: { closes: [50, 50, 50, 50], currency: 'USD' } });
    const answer = portfolioHistory(
      historyRequest(days.subarray(0, 4), { versions: [{ from: noon(days[0]!), holdings: { US: 10, $USD: 100 } }] }),
      prices,
      fxTable({ USD: [0.9, 0.9, 1, 0.8] }),
    );
    assert.deepEqual(column(answer, 'value'), [540, 540, 600, 480]);
    assert.deepEqual(column(answer, 'cash'), [90, 90, 100, 80]);
    assert.deepEqual(column(answer, 'twr'), [0, 0, 0.11111111, -0.11111111]);
  });

  it('a deposit in USD counts at that day’s rate in the base currency', () => {
    const prices = priceTable(days.subarray(0, 3), { A: { closes: [100, 100, 100] } });
    const answer = portfolioHistory(
      historyRequest(days.subarray(0, 3), {
        versions: [
          { from: noon(days[0]!), holdings: { A: 10 } },
          { from: noon(days[1]!), holdings: { A: 10, $USD: 100 } },
        ],
        flows: [{ at: noon(days[1]!), amount: '100', currency: 'USD' }],
      }),
      prices,
      fxTable({ USD: [0.9, 0.92, 0.95] }),
    );
    assert.deepEqual(column(answer, 'net_deposits'), [0, 92, 92]);
    assert.deepEqual(column(answer, 'value'), [1000, 1092, 1095]);
    close(answer.points[2]!.twr, 1095 / 1092 - 1);
  });

  describe('sampling', () => {
    // Mon 26 January to Tue 10 February 2026, without Friday 6 February (a holiday).
    const all = weekdays('2026-01-26', 12);
    const calendar = all.filter((d) => d !== day('2026-02-06'));
    const prices = priceTable(calendar, { A: { closes: Array.from(calendar, (_, k) => 100 + k) } });
    const request = (frequency: HistoryRequest['frequency']) =>
      historyRequest(calendar, { frequency, versions: [{ from: '2026-01-01T00:00:00Z', holdings: { A: 1 } }] });

    it('weekly: the first date, the last business day of each week, the last date', () => {
      const answer = portfolioHistory(request('W'), prices, fxTable());
      assert.deepEqual(column(answer, 'date'), ['2026-01-26', '2026-01-30', '2026-02-05', '2026-02-10']);
      assert.deepEqual(column(answer, 'value'), [100, 104, 108, 110]);
    });

    it('monthly: the first date, the last business day of each month, the last date', () => {
      const answer = portfolioHistory(request('M'), prices, fxTable());
      assert.deepEqual(column(answer, 'date'), ['2026-01-26', '2026-01-30', '2026-02-10']);
      close(answer.points[2]!.twr, 110 / 100 - 1);
    });

    it('daily: every business day in the period, none outside it', () => {
      const answer = portfolioHistory({ ...request('D'), from: '2026-01-31', to: '2026-02-03' }, prices, fxTable());
      assert.deepEqual(column(answer, 'date'), ['2026-02-02', '2026-02-03']);
    });
  });

  describe('money-weighted return', () => {
    it('matches the spreadsheet XIRR example (0.373362535, shown to 9 digits)', () => {
      const dates = ['2008-01-01', '2008-03-01', '2008-10-30', '2009-02-15', '2009-04-01'].map(day);
      const years = dates.map((d) => (d - dates[0]!) / 365);
      close(xirr([-10000, 2750, 4250, 3250, 2750], years), 0.373362535, 1e-8);
    });

    it('falls back to bisection where Newton leaves, and is null without a change of sign', () => {
      close(xirr([-1, 1e6], [0, 1]), 999_999, 1e-3);
      assert.equal(xirr([1, 2], [0, 1]), null);
      assert.equal(xirr([-1, 2], [0, 0]), null);
    });

    it('of a portfolio: 1000 growing to 1210 in 730 days is 10 % a year; nothing invested has none', () => {
      const two = Int32Array.of(day('2025-01-06'), day('2027-01-06'));
      const prices = priceTable(two, { A: { closes: [100, 121] } });
      const plain = portfolioHistory(historyRequest(two, { versions: [{ from: noon(two[0]!), holdings: { A: 10 } }] }), prices, fxTable());
      close(plain.summary.money_weighted_return, 0.1);
      const empty = portfolioHistory(historyRequest(two), prices, fxTable());
      assert.equal(empty.summary.money_weighted_return, null);
    });

    it('a deposit mid-period is money invested for the rest of it', () => {
      // 1000 at the start and 1000 after 364 days, both growing at 10 % a year to the end (728 days).
      const three = Int32Array.of(day('2025-01-06'), day('2026-01-05'), day('2027-01-04'));
      const end = 1000 * 1.1 ** (728 / 365) + 1000 * 1.1 ** (364 / 365);
      const prices = priceTable(three, { A: { closes: [100, 100, (end - 1000) / 10] } });
      const answer = portfolioHistory(
        historyRequest(three, {
          versions: [
            { from: noon(three[0]!), holdings: { A: 10 } },
            { from: noon(three[1]!), holdings: { A: 10, $EUR: 1000 } },
          ],
          flows: [{ at: noon(three[1]!), amount: '1000', currency: 'EUR' }],
        }),
        prices,
        fxTable(),
      );
      close(answer.summary.money_weighted_return, 0.1);
      // The time-weighted return: 0 % in the first year, then the 2000 held (A and the cash) grow to the end value.
      close(answer.summary.twr, end / 2000 - 1);
    });

    it('a deposit that is the whole value on the last day gives no rate', () => {
      const two = weekdays('2026-01-05', 2);
      const prices = priceTable(two, { A: { closes: [100, 100] } });
      const answer = portfolioHistory(
        historyRequest(two, {
          versions: [{ from: noon(two[1]!), holdings: { $EUR: 500 } }],
          flows: [{ at: noon(two[1]!), amount: '500', currency: 'EUR' }],
        }),
        prices,
        fxTable(),
      );
      assert.deepEqual(column(answer, 'value'), [0, 500]);
      assert.deepEqual(column(answer, 'twr'), [0, 0]);
      assert.equal(answer.summary.money_weighted_return, null);
    });
  });

  describe('model comparison', () => {
    // Fri 30 January, Mon 2 February (a new month's first business day), Tue 3 February.
    const three = weekdays('2026-01-30', 3);
    const prices = priceTable(three, { A: { closes: [100, 200, 100] } });
    const versions = [{ from: noon(three[0]!), holdings: { A: 10 } }];

    it('the model is rebalanced on the first business day of a month', () => {
      const answer = portfolioHistory(historyRequest(three, { versions, model: { weights: { A: 0.5 }, cash_weight: 0.5 } }), prices, fxTable());
      // 5 A + 500 → 1500 on 2 Feb, rebalanced to 3.75 A + 750 → 1125 on 3 Feb (1000 without it).
      assert.deepEqual(column(answer, 'model_value'), [1000, 1500, 1125]);
      assert.deepEqual(column(answer, 'model_twr'), [0, 0.5, 0.125]);
      assert.deepEqual(column(answer, 'twr'), [0, 1, 0]);
      assert.deepEqual(column(answer, 'deviation'), [0, 0.5, -0.125]);
    });

    it('a model that is the portfolio deviates by nothing, deposits included', () => {
      const answer = portfolioHistory(
        historyRequest(three, {
          versions: [...versions, { from: noon(three[1]!), holdings: { A: 11 } }],
          flows: [{ at: noon(three[1]!), amount: '200', currency: 'EUR' }],
          model: { weights: { A: 1 }, cash_weight: 0 },
        }),
        prices,
        fxTable(),
      );
      assert.deepEqual(column(answer, 'model_value'), column(answer, 'value'));
      assert.deepEqual(column(answer, 'deviation'), [0, 0, 0]);
    });
  });

  it('rounds money to the cent and returns to 1e-8, half to even', () => {
    assert.deepEqual([0.125, 0.375, -0.125, -0.375, 2.5e-3, 1 / 3].map(toCents), [0.12, 0.38, -0.12, -0.38, 0, 0.33]);
    assert.deepEqual([1 / 3, -2 / 3, 0].map(toReturn), [0.33333333, -0.66666667, 0]);
  });

  describe('refusals', () => {
    const prices = priceTable(days, { A: { closes: [100, 101, 102, 103, 104] } });
    const refuses = (request: HistoryRequest, kind: typeof InvalidValue | typeof UnknownValue, loc: (string | number)[], table: PriceTable = prices) => {
      const before = JSON.stringify(request);
      const closes = Array.from(table.closes[0]!);
      assert.throws(
        () => portfolioHistory(request, table, fxTable()),
        (e: unknown) => e instanceof kind && assert.deepEqual(e.loc, loc) === undefined,
      );
      assert.equal(JSON.stringify(request), before, 'the request is left as it was');
      assert.deepEqual(Array.from(table.closes[0]!), closes, 'the closes are left as they were');
    };

    it('versions out of order', () =>
      refuses(
        historyRequest(days, {
          versions: [
            { from: noon(days[2]!), holdings: { A: 1 } },
            { from: noon(days[1]!), holdings: { A: 2 } },
          ],
        }),
        InvalidValue,
        ['versions', 1, 'from'],
      ));
    it('a holding that is not a decimal', () =>
      refuses(historyRequest(days, { versions: [{ from: noon(days[0]!), holdings: { A: '1e3' } }] }), InvalidValue, ['versions', 0, 'holdings', 'A']));
    it('an instrument without prices, __proto__ included', () => {
      refuses(historyRequest(days, { versions: [{ from: noon(days[0]!), holdings: { B: 1 } }] }), UnknownValue, ['versions', 0, 'holdings', 'B']);
      const hostile = JSON.parse(`{"from": "${noon(days[0]!)}", "holdings": {"__proto__": 1}}`) as HistoryRequest['versions'][number];
      refuses(historyRequest(days, { versions: [hostile] }), UnknownValue, ['versions', 0, 'holdings', '__proto__']);
    });
    it('a flow in a currency without rates', () =>
      refuses(historyRequest(days, { flows: [{ at: noon(days[1]!), amount: '5', currency: 'CHF' }] }), UnknownValue, ['flows', 0, 'currency']));
    it('a timestamp that is not UTC', () =>
      refuses(historyRequest(days, { flows: [{ at: '2026-01-06T12:00:00+01:00', amount: '5', currency: 'EUR' }] }), InvalidValue, ['flows', 0, 'at']));
    // A period without business days is answered with no points (period.test.ts).
    it('a period that ends before it starts', () => refuses(historyRequest(days, { from: '2026-01-09', to: '2026-01-05' }), InvalidValue, ['to']));
    it('holdings or lists of the wrong kind', () => {
      const wrong = (fields: object) => ({ ...historyRequest(days), ...fields }) as unknown as HistoryRequest;
      refuses(wrong({ versions: [{ from: noon(days[0]!), holdings: null }] }), InvalidValue, ['versions', 0, 'holdings']);
      refuses(wrong({ flows: {} }), InvalidValue, ['flows']);
      refuses(wrong({ model: { weights: [1], cash_weight: 0 } }), InvalidValue, ['model', 'weights']);
      refuses(wrong({ frequency: 'Y' }), InvalidValue, ['frequency']);
    });
    it('model weights that do not sum to 1', () =>
      refuses(historyRequest(days, { model: { weights: { A: 0.7 }, cash_weight: 0.2 } }), InvalidValue, ['model']));
    it('a holding before its instrument has a close', () =>
      refuses(
        historyRequest(days, { versions: [{ from: noon(days[0]!), holdings: { A: 1 } }] }),
        UnknownValue,
        ['versions', 0, 'holdings', 'A'],
        priceTable(days, { A: { closes: [NaN, NaN, 102, 103, 104] } }),
      ));
  });
});
