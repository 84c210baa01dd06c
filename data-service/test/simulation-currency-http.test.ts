import assert from 'node:assert/strict';
import { join } from 'node:path';
import { newUlid } from '@platform/shared';
import { testWorkDir } from '@platform/test-support/database';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { DAYS_PER_YEAR, formatDay } from '../src/simulation/dates.ts';
import { commonCloses } from '../src/simulation/price-history.ts';
import { openDuckStore, type DuckStore } from '../src/store/duckdb.ts';
import { dataClient } from './support/data-client.ts';

// POST /performance/future/ in the request's currency, against the run's sample universe (rates
// for every catalogue currency over its two years of business days). The instruments are found
// through the reference query and their closes read from the same reference file the service
// reads; the rates come through GET /data/fx-rates.

const PATH = '/performance/future/';
type Point = { date: string; rate: number };

/** Annual {mean, stdev} of daily log returns, as docs/adr/0015-simulation-model.md defines them. */
function estimate(days: ArrayLike<number>, closes: number[]): { mean: number; stdev: number } {
  const r = closes.slice(1).map((c, k) => Math.log(c / closes[k]!));
  const mean = r.reduce((a, b) => a + b, 0) / r.length;
  const variance = r.reduce((a, b) => a + (b - mean) ** 2, 0) / (r.length - 1);
  const perYear = r.length / ((days[days.length - 1]! - days[0]!) / DAYS_PER_YEAR);
  const [mu, s2] = [mean * perYear, variance * perYear];
  const m = Math.exp(mu + s2 / 2) - 1;
  return { mean: m, stdev: (1 + m) * Math.sqrt(Math.exp(s2) - 1) };
}

/** The latest point of an ascending series on or before `date`. */
const onOrBefore = (series: Point[], date: string): Point => {
  const found = series.filter((p) => p.date <= date).at(-1);
  assert.ok(found, `no rate on or before ${date}`);
  return found;
};

describe('future performance in the request currency', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let client: ReturnType<typeof dataClient>;
  let duck: DuckStore;
  let usd: string;
  let eur: string;

  before(async () => {
    platform = await startTestPlatform();
    client = dataClient(platform.dataUrl, await platform.tenant());
    duck = await openDuckStore({ path: join(testWorkDir(), `currency-${newUlid()}.duckdb`), referenceDir: join(testWorkDir(), 'reference'), connections: 1 });
    const isins = await duck.use(async ({ conn, ref }) =>
      (await conn.runAndReadAll(`select distinct isin from ${ref}.prices order by isin`)).getRows().map((r) => String(r[0])),
    );
    const res = await client.post('/data/reference/query/', { instrument_ids: isins, fields: ['CURRENCY'], fields_extra: [] });
    assert.equal(res.status, 200, res.text);
    const rows: Record<string, { currency: string }> = res.body.data;
    const first = (currency: string) => {
      const found = Object.entries(rows).find(([, row]) => row.currency === currency);
      assert.ok(found, `no ${currency} instrument among ${isins.length}: ${res.text.slice(0, 300)}`);
      return found[0];
    };
    usd = first('USD');
    eur = first('EUR');
  });
  after(async () => {
    await platform?.stop();
    await duck?.close();
  });

  const historical = (isin: string, extra: Record<string, unknown> = {}) => ({
    asset_classes: { EQUITY: [1, 1] },
    start_date: '2026-01-01',
    end_date: '2028-01-01',
    start_amount: 1000,
    recurring_deposit_amount: 50,
    sample_frequency: 'M',
    quantiles: [0.05, 0.5, 0.95],
    use_expected_returns: false,
    asset_class_mapping: { EQUITY: isin },
    scenarios: 500,
    seed: 7,
    ...extra,
  });

  it('answers byte for byte as without a currency when the instrument is already in it', async () => {
    for (const [isin, currency] of [
      [eur, 'EUR'],
      [usd, 'USD'],
    ] as const) {
      const without = await client.post(PATH, historical(isin));
      const within = await client.post(PATH, historical(isin, { currency }));
      const same = await client.post(PATH, historical(isin, { currency, amount_currency: currency }));
      assert.equal(without.status, 200, without.text);
      assert.equal(within.text, without.text, `${isin} in ${currency}`);
      assert.equal(same.text, without.text);
    }
  });

  it('estimates a USD instrument for a EUR investor from its closes times the EUR per USD rate of each day', async () => {
    const history = await commonCloses(duck, [usd]);
    const days = Array.from(history.days);
    const [from, to] = [formatDay(days[0]! - 10), formatDay(days.at(-1)!)];
    const rates = await client.get(`/data/fx-rates/USD/EUR?from=${from}&to=${to}`);
    assert.equal(rates.status, 200, rates.text);
    const series: Point[] = rates.body.data.rates;
    const inEur = Array.from(history.closes[0]!, (close, k) => close * onOrBefore(series, formatDay(days[k]!)).rate);
    const expected = estimate(days, inEur);
    const inUsd = estimate(days, Array.from(history.closes[0]!));
    assert.ok(Math.abs(expected.mean - inUsd.mean) > 1e-4 || Math.abs(expected.stdev - inUsd.stdev) > 1e-4, 'the rates move the estimate');

    const converted = await client.post(PATH, historical(usd, { currency: 'EUR' }));
    const own = await client.post(PATH, historical(usd));
    assert.equal(converted.status, 200, converted.text);
    assert.notEqual(converted.text, own.text);
    // The same simulation from the parameters estimated here: expected mode, one class, no transition.
    const byHand = await client.post(PATH, {
      ...historical(usd, { currency: 'EUR' }),
      use_expected_returns: true,
      asset_class_mapping: undefined,
      asset_class_st_mean_and_stdev: { EQUITY: expected },
      short_to_long_term_transition_cut_off: 0,
    });
    assert.equal(byHand.status, 200, byHand.text);
    for (const q of ['0.05', '0.5', '0.95'])
      for (const [date, value] of Object.entries<number>(converted.body.data.value[q])) {
        const other = byHand.body.data.value[q][date];
        assert.ok(Math.abs(value - other) <= 0.011 + 1e-9 * Math.abs(other), `${q} ${date}: ${value} vs ${other}`);
      }
  });

  it('converts start_amount and recurring_deposit_amount from amount_currency at the rate of the start date', async () => {
    const start = '2026-06-14'; // a Sunday: Friday's rate
    const rates = await client.get('/data/fx-rates/USD/EUR?from=2026-06-01&to=2026-06-30');
    const rate = onOrBefore(rates.body.data.rates, start).rate;
    assert.ok(rate < 1.5 && rate > 0.5, String(rate));
    const expected = (extra: Record<string, unknown>) => ({
      asset_classes: { EQUITY: [1, 1] },
      start_date: start,
      end_date: '2027-06-14',
      currency: 'EUR',
      start_amount: 1000,
      recurring_deposit_amount: 50,
      sample_frequency: 'M',
      asset_class_st_mean_and_stdev: { EQUITY: { mean: 0.05, stdev: 0.1 } },
      scenarios: 200,
      seed: 3,
      ...extra,
    });
    const res = await client.post(PATH, expected({ amount_currency: 'USD' }));
    assert.equal(res.status, 200, res.text);
    const deposits: Record<string, number> = res.body.data.deposits.deposits;
    const near = (actual: number, want: number, what: string) => assert.ok(Math.abs(actual - want) <= 0.01, `${what}: ${actual} vs ${want}`);
    near(deposits[start]!, 1050 * rate, 'start');
    near(deposits['2026-07-14']!, 1100 * rate, 'a month later');
    near(deposits['2027-06-14']!, (1000 + 13 * 50) * rate, 'end');
    const inEur = await client.post(PATH, expected({}));
    assert.deepEqual(inEur.body.data.deposits.deposits[start], 1050);
  });

  it('refuses an unknown currency, a stale or missing rate and amount_currency without currency (422 naming the field), and changes nothing', async () => {
    const good: Record<string, unknown> = historical(usd, { currency: 'EUR' });
    const before = await client.post(PATH, good);
    assert.equal(before.status, 200, before.text);
    const refused = async (body: Record<string, unknown>, code: string, loc: (string | number)[], message?: RegExp) => {
      const res = await client.post(PATH, body);
      assertProblem(res, 422, code);
      assert.deepEqual(res.body.errors[0].loc, loc, res.text);
      if (message) assert.match(res.body.errors[0].msg, message);
    };
    await refused({ ...good, amount_currency: 'XYZ' }, 'unknown_field', ['body', 'amount_currency'], /'XYZ'/);
    await refused({ ...good, currency: 'XYZ' }, 'unknown_field', ['body', 'currency'], /'XYZ'/);
    // The sample's rates end on 2026-11-20: a later start converts at today's latest rate, stale by now.
    await refused(
      { ...good, start_date: '2031-01-01', end_date: '2032-01-01', amount_currency: 'USD' },
      'unknown_field',
      ['body', 'amount_currency'],
      /EUR\/USD rate of 2026-11-20 is older than 5 days on \d{4}-\d{2}-\d{2} \(for USD\/EUR\)/,
    );
    // Long before the first rate.
    await refused(
      { ...good, start_date: '2001-01-01', end_date: '2002-01-01', amount_currency: 'USD' },
      'unknown_field',
      ['body', 'amount_currency'],
      /no EUR\/USD rate on or before 2001-01-01 \(for USD\/EUR\)/,
    );
    const { currency: _currency, ...noCurrency } = good;
    await refused({ ...noCurrency, amount_currency: 'USD' }, 'validation_failed', ['body', 'amount_currency']);
    await refused({ ...good, amount_currency: 'usd' }, 'validation_failed', ['body', 'amount_currency']);
    const after = await client.post(PATH, good);
    assert.equal(after.text, before.text);
  });
});
