import assert from 'node:assert/strict';
import { parseDecimal } from '@platform/shared';
import { UnknownValue } from '../src/domain/errors.ts';
import type { FxRates } from '../src/fx/convert.ts';
import { amountRateDate, amountsInCurrency, checkKnownCurrency, closesInCurrency } from '../src/simulation/currency.ts';
import { parseDay } from '../src/simulation/dates.ts';
import { estimateFromHistory, type CommonCloses } from '../src/simulation/history.ts';

// The price history and the amounts of a simulation in the request's currency, by hand: rates are
// units per 1 EUR as the ECB publishes them, so 1 USD = 1 / rate(USD) EUR.

const ratesOf = (table: Record<string, [string, string][]>): FxRates =>
  new Map(Object.entries(table).map(([c, rows]) => [c, rows.map(([date, rate]) => ({ date, rate: parseDecimal(rate) }))]));

const historyOf = (dates: string[], ...series: number[][]): CommonCloses => ({
  days: Int32Array.from(dates, (d) => parseDay(d)!),
  closes: series.map((s) => Float64Array.from(s)),
  available: series.map((s) => s.length),
});

const LOCS = [
  ['body', 'asset_class_mapping', 'EQUITY'],
  ['body', 'asset_class_mapping', 'BONDS'],
];

const refusal = (work: () => unknown): UnknownValue => {
  try {
    work();
  } catch (error) {
    if (error instanceof UnknownValue) return error;
    throw error;
  }
  assert.fail('expected an UnknownValue');
};

const near = (actual: ArrayLike<number>, expected: number[]) => {
  assert.equal(actual.length, expected.length);
  expected.forEach((e, k) => assert.ok(Math.abs(actual[k]! - e) <= 1e-12 * Math.abs(e), `${k}: ${actual[k]} ≠ ${e}`));
};

// Friday 2026-01-02 and Monday 2026-01-05 published; Saturday 2026-01-03 takes Friday's rate.
const RATES = ratesOf({
  USD: [
    ['2025-12-31', '1.25'],
    ['2026-01-02', '1.00'],
    ['2026-01-05', '0.80'],
  ],
  GBP: [
    ['2025-12-31', '0.50'],
    ['2026-01-02', '0.50'],
    ['2026-01-05', '0.40'],
  ],
});
const DATES = ['2025-12-31', '2026-01-02', '2026-01-03', '2026-01-05'];

describe('simulation in the request currency', () => {
  it('turns a USD instrument flat in dollars into EUR closes that move exactly as the dollar does', () => {
    const flat = historyOf(DATES, [100, 100, 100, 100]);
    const inEur = closesInCurrency(flat, ['USD'], 'EUR', RATES, 5, LOCS);
    // 100 USD at 1.25, 1.00, 1.00 (Saturday: Friday's rate), 0.80 USD per EUR.
    near(inEur.closes[0]!, [80, 100, 100, 125]);
    const returns = Array.from(inEur.closes[0]!.subarray(1), (c, k) => Math.log(c / inEur.closes[0]![k]!));
    near(
      returns.filter((r) => r !== 0),
      [Math.log(1.25 / 1.0), Math.log(1.0 / 0.8)],
    );
    assert.equal(returns[1], 0);
    assert.equal(inEur.days, flat.days);
    assert.deepEqual(inEur.available, flat.available);
  });

  it('converts between two currencies other than EUR through EUR, and leaves a series already in the currency as it is', () => {
    const history = historyOf(DATES, [10, 20, 30, 40], [1, 2, 3, 4]);
    const inUsd = closesInCurrency(history, ['GBP', 'USD'], 'USD', RATES, 5, LOCS);
    // USD per GBP = rate(USD) / rate(GBP): 2.5, 2, 2, 2.
    near(inUsd.closes[0]!, [25, 40, 60, 80]);
    assert.equal(inUsd.closes[1], history.closes[1], 'the USD series is the very same array');
    const unchanged = closesInCurrency(history, ['EUR', 'EUR'], 'EUR', RATES, 5, LOCS);
    assert.deepEqual(unchanged.closes, history.closes);
    assert.equal(unchanged.closes[0], history.closes[0]);
  });

  it('estimates the EUR parameters of a flat USD instrument as those of the dollar: the rate drift, reversed', () => {
    const g = 0.0004;
    const n = 200;
    const dates = Array.from({ length: n }, (_, k) => new Date(Date.UTC(2024, 0, 1 + k)).toISOString().slice(0, 10));
    const usdPerEur = dates.map((_, k) => Math.exp(g * k));
    const rates = ratesOf({ USD: dates.map((d, k) => [d, usdPerEur[k]!.toFixed(10)]) });
    const converted = closesInCurrency(historyOf(dates, new Array(n).fill(50)), ['USD'], 'EUR', rates, 5, LOCS);
    const byHand = historyOf(
      dates,
      dates.map((_, k) => 50 / Number(usdPerEur[k]!.toFixed(10))),
    );
    const a = estimateFromHistory(['EQUITY'], ['US0000000001'], converted);
    const b = estimateFromHistory(['EQUITY'], ['US0000000001'], byHand);
    assert.ok(Math.abs(a.parameters[0]!.mean - b.parameters[0]!.mean) < 1e-12);
    // About −g a day: ln(1 + m) ≈ −g × 365.25 (no volatility beyond rounding).
    assert.ok(Math.abs(Math.log(1 + a.parameters[0]!.mean) + g * 365.25) < 1e-6, String(a.parameters[0]!.mean));
  });

  it('refuses a stale or missing rate on a date of the history at the mapping entry, naming the pair and the date', () => {
    const gap = ratesOf({
      USD: [
        ['2026-01-02', '1.10'],
        ['2026-01-12', '1.20'],
      ],
    });
    const history = historyOf(['2026-01-02', '2026-01-08', '2026-01-12'], [100, 100, 100], [5, 5, 5]);
    const stale = refusal(() => closesInCurrency(history, ['EUR', 'USD'], 'EUR', gap, 5, LOCS));
    assert.deepEqual(stale.loc, ['body', 'asset_class_mapping', 'BONDS']);
    assert.match(stale.msg, /EUR\/USD rate of 2026-01-02 is older than 5 days on 2026-01-08 \(for USD\/EUR\)/);
    // Six days old is within a limit of 6.
    near(closesInCurrency(history, ['EUR', 'USD'], 'EUR', gap, 6, LOCS).closes[1]!, [5 / 1.1, 5 / 1.1, 5 / 1.2]);

    const early = historyOf(['2025-12-30', '2026-01-02'], [100, 100]);
    const missing = refusal(() => closesInCurrency(early, ['USD'], 'EUR', gap, 5, LOCS));
    assert.deepEqual(missing.loc, ['body', 'asset_class_mapping', 'EQUITY']);
    assert.match(missing.msg, /no EUR\/USD rate on or before 2025-12-30 \(for USD\/EUR\)/);
    const unknown = refusal(() => closesInCurrency(early, ['XYZ'], 'EUR', gap, 5, LOCS));
    assert.match(unknown.msg, /no EUR\/XYZ rate on or before 2025-12-30/);
  });

  it('converts the amounts exactly at the rate as of the start date, and refuses at amount_currency when it is stale', () => {
    const amounts = { startAmount: 1000, depositAmount: -50.1 };
    // 1 USD = 1 / 1.25 = 0.8 EUR on 2025-12-31; Sunday 2026-01-04 takes Friday's 1.00.
    assert.deepEqual(amountsInCurrency(amounts, 'USD', 'EUR', '2025-12-31', RATES, 5), { startAmount: 800, depositAmount: -40.08 });
    assert.deepEqual(amountsInCurrency(amounts, 'USD', 'EUR', '2026-01-04', RATES, 5), amounts);
    assert.deepEqual(amountsInCurrency(amounts, 'GBP', 'USD', '2026-01-05', RATES, 5), { startAmount: 2000, depositAmount: -100.2 });
    assert.equal(amountsInCurrency(amounts, 'EUR', 'EUR', '1900-01-01', new Map(), 5), amounts);
    const stale = refusal(() => amountsInCurrency(amounts, 'USD', 'EUR', '2026-01-20', RATES, 5));
    assert.deepEqual(stale.loc, ['body', 'amount_currency']);
    assert.match(stale.msg, /EUR\/USD rate of 2026-01-05 is older than 5 days on 2026-01-20 \(for USD\/EUR\)/);
  });

  it('converts a future start date at the latest rate known today, and names an unknown currency with the known ones', () => {
    assert.equal(amountRateDate('2030-01-01', '2026-11-28'), '2026-11-28');
    assert.equal(amountRateDate('2026-01-05', '2026-11-28'), '2026-01-05');
    const known = new Set(['EUR', 'USD', 'GBP']);
    checkKnownCurrency('USD', known, 'currency');
    const unknown = refusal(() => checkKnownCurrency('XYZ', known, 'amount_currency'));
    assert.deepEqual(unknown.loc, ['body', 'amount_currency']);
    assert.match(unknown.msg, /'XYZ'.*EUR, GBP, USD/);
  });
});
