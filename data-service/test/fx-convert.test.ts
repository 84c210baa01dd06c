import assert from 'node:assert/strict';
import { parseDecimal, toText } from '@platform/shared';
import { convert, crossRate, FxRateUnavailable, pairSeries, rateOnOrBefore, type FxRates } from '../src/fx/convert.ts';

/** Rates as the ECB would publish them: units per 1 EUR, by currency, sorted by date. */
const ratesOf = (table: Record<string, [string, string][]>): FxRates =>
  new Map(Object.entries(table).map(([c, rows]) => [c, rows.map(([date, rate]) => ({ date, rate: parseDecimal(rate) }))]));

// Thursday 2026-01-01 is a holiday (no fixing); Friday 2026-01-02 and Monday 2026-01-05 are published.
const RATES = ratesOf({
  USD: [
    ['2025-12-31', '1.0850'],
    ['2026-01-02', '1.0800'],
    ['2026-01-05', '1.0900'],
  ],
  GBP: [
    ['2025-12-31', '0.8600'],
    ['2026-01-02', '0.8500'],
  ],
  JPY: [['2026-01-05', '160.00']],
});

const caught = (work: () => unknown): FxRateUnavailable => {
  try {
    work();
  } catch (error) {
    if (error instanceof FxRateUnavailable) return error;
    throw error;
  }
  assert.fail('expected FxRateUnavailable');
};

describe('fx: conversion through EUR', () => {
  it('takes a EUR leg as it is published and inverts it the other way', () => {
    assert.equal(toText(crossRate(RATES, 'EUR', 'USD', '2026-01-02', 5)), '1.08');
    // 1 / 1.08 = 0.925925… (25 significant digits, rounded half-even by hand).
    assert.equal(crossRate(RATES, 'USD', 'EUR', '2026-01-02', 5).toSignificantDigits(25).toFixed(), '0.9259259259259259259259259');
  });

  it('computes a cross rate as rate(quote) / rate(base)', () => {
    // USD per GBP on 2026-01-02: 1.08 / 0.85 = 108 / 85 = 1.27058823529411764705882…
    assert.equal(crossRate(RATES, 'GBP', 'USD', '2026-01-02', 5).toSignificantDigits(20).toFixed(), '1.2705882352941176471');
    // and 100 GBP are 127.058823529… USD
    assert.equal(convert(RATES, parseDecimal('100'), 'GBP', 'USD', '2026-01-02', 5).toSignificantDigits(12).toFixed(), '127.058823529');
  });

  it('uses the latest rate on or before the date: a weekend takes Friday', () => {
    assert.equal(toText(crossRate(RATES, 'EUR', 'USD', '2026-01-04', 5)), '1.08');
    assert.equal(toText(crossRate(RATES, 'EUR', 'USD', '2026-01-01', 5)), '1.085');
    assert.equal(rateOnOrBefore(RATES.get('USD')!, '2025-12-30'), undefined);
  });

  it('converts a currency to itself at exactly 1, even without rates', () => {
    assert.equal(toText(crossRate(RATES, 'CHF', 'CHF', '2026-01-02', 5)), '1');
    assert.equal(toText(convert(RATES, parseDecimal('12.34'), 'EUR', 'EUR', '1990-01-01', 0)), '12.34');
  });

  it('refuses a pair with no rate on or before the date, naming the leg and the pair', () => {
    const e = caught(() => crossRate(RATES, 'EUR', 'USD', '2025-12-30', 5));
    assert.equal(e.reason, 'missing');
    assert.equal(e.message, 'no EUR/USD rate on or before 2025-12-30');
    const cross = caught(() => crossRate(RATES, 'GBP', 'JPY', '2026-01-02', 5));
    assert.equal(cross.message, 'no EUR/JPY rate on or before 2026-01-02 (for GBP/JPY)');
    assert.deepEqual([cross.base, cross.quote], ['GBP', 'JPY']);
    assert.equal(caught(() => crossRate(RATES, 'EUR', 'CHF', '2026-01-02', 5)).message, 'no EUR/CHF rate on or before 2026-01-02');
  });

  it('refuses a stale leg: older than the maximum age in days, the boundary day still fresh', () => {
    // Friday 2026-01-02 + 5 days = Wednesday 2026-01-07: fresh; Thursday: 6 days old.
    assert.equal(toText(crossRate(RATES, 'GBP', 'EUR', '2026-01-07', 5).times(parseDecimal('0.85'))), '1');
    const e = caught(() => crossRate(RATES, 'GBP', 'EUR', '2026-01-08', 5));
    assert.equal(e.reason, 'stale');
    assert.equal(e.message, 'EUR/GBP rate of 2026-01-02 is older than 5 days on 2026-01-08 (for GBP/EUR)');
    const stale = ratesOf({ USD: [['2025-12-01', '1.05']] });
    assert.equal(caught(() => crossRate(stale, 'EUR', 'USD', '2026-01-05', 5)).message, 'EUR/USD rate of 2025-12-01 is older than 5 days on 2026-01-05');
  });

  it('gives a series only on dates where both legs are published', () => {
    const series = pairSeries(RATES, 'GBP', 'USD', '2025-12-01', '2026-01-31');
    assert.deepEqual(
      series.map((p) => [p.date, p.rate.toSignificantDigits(6).toFixed()]),
      [
        ['2025-12-31', '1.26163'], // 1.085 / 0.86 = 1.261627…
        ['2026-01-02', '1.27059'], // 1.08 / 0.85
      ],
    );
    assert.deepEqual(
      pairSeries(RATES, 'USD', 'EUR', '2026-01-02', '2026-01-05').map((p) => [p.date, p.rate.toSignificantDigits(4).toFixed()]),
      [
        ['2026-01-02', '0.9259'],
        ['2026-01-05', '0.9174'],
      ],
    );
    assert.deepEqual(pairSeries(RATES, 'GBP', 'JPY', '2025-01-01', '2026-12-31'), []);
  });
});
