import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { testWorkDir } from '@platform/test-support/database';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { parseDay } from '../src/simulation/dates.ts';
import { estimateFromHistory, MIN_CLOSES } from '../src/simulation/history.ts';
import { logParameters } from '../src/simulation/model.ts';
import { openDuckStore, type DuckStore } from '../src/store/duckdb.ts';
import { commonCloses } from '../src/simulation/price-history.ts';
import { buildReferenceFile } from '../src/store/reference-files.ts';
import { dataClient } from './support/data-client.ts';

// Historical mode (use_expected_returns: false) on a reference file of known prices: 367 daily
// closes (366 returns over 366 calendar days, so 365.25 returns a year) whose log returns are
// constant, or alternate ±a around a drift b, so the estimates have closed forms.

const FIRST = parseDay('2020-01-01')!;
const CLOSES = 367;
const B = 0.0003;
const A = 0.01;
/** ln(1.05) a year, never moving otherwise: 5 % a year with no volatility. */
const G = Math.log(1.05) / 365.25;

type Series = { isin: string; assetClass: string; logReturn: (k: number) => number; from?: number; count?: number; currency?: string };
const SERIES: Series[] = [
  { isin: 'XF0000000001', assetClass: 'FIXED_INCOME', logReturn: () => G },
  { isin: 'XE0000000001', assetClass: 'EQUITY', logReturn: (k) => B + A * (k % 2 === 0 ? 1 : -1) },
  { isin: 'XE0000000002', assetClass: 'EQUITY', logReturn: (k) => B + A * (k % 2 === 0 ? 1 : -1) },
  { isin: 'XE0000000003', assetClass: 'EQUITY', logReturn: (k) => B - A * (k % 2 === 0 ? 1 : -1) },
  { isin: 'XS0000000001', assetClass: 'EQUITY', logReturn: () => 0.001, count: MIN_CLOSES - 1 },
  { isin: 'XL0000000001', assetClass: 'EQUITY', logReturn: () => 0.001, from: 0, count: 100 },
  { isin: 'XL0000000002', assetClass: 'EQUITY', logReturn: () => 0.001, from: 100, count: 100 },
  // Flat in their own currencies: what they earn a EUR investor is the currency's move.
  { isin: 'XG0000000001', assetClass: 'EQUITY', logReturn: () => 0, currency: 'GBP' },
  { isin: 'XU0000000001', assetClass: 'EQUITY', logReturn: () => 0, currency: 'USD' },
];
const [FLAT, ZIG, ZIG_TOO, ANTI, SHORT, EARLY, LATE, IN_GBP, IN_USD] = SERIES.map((s) => s.isin) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];
/** Pounds per 1 EUR fall by G a day, so the pound gains 5 % a year against the euro; the dollar's rates stop for 20 days after day 100. */
const GBP_RATE = (k: number) => (0.8 * Math.exp(-G * k)).toFixed(10);
const USD_GAP = { from: 101, to: 120 };
const UNKNOWN = 'XX0000000009';

async function buildPrices(): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(testWorkDir(), 'simulation-history-'));
  const referenceDir = join(dir, 'reference');
  await buildReferenceFile(referenceDir, 'simulation-fixture', async (conn) => {
    for (const s of SERIES) {
      await conn.run('insert into instruments (isin, name, asset_class, instrument_type, currency) values ($1, $2, $3, $4, $5)', [
        s.isin,
        `Series ${s.isin}`,
        s.assetClass,
        'ETF',
        s.currency ?? 'EUR',
      ]);
      const rows: string[] = [];
      let close = 100;
      const from = s.from ?? 0;
      for (let k = 0; k < (s.count ?? CLOSES); k++) {
        if (k > 0) close *= Math.exp(s.logReturn(k - 1));
        rows.push(`('${s.isin}', date '2020-01-01' + ${from + k}, ${close})`);
      }
      await conn.run(`insert into prices (isin, date, close) values ${rows.join(', ')}`);
    }
    const rates: string[] = [];
    for (let k = 0; k < CLOSES; k++) {
      rates.push(`('GBP', date '2020-01-01' + ${k}, ${GBP_RATE(k)})`);
      if (k < USD_GAP.from || k > USD_GAP.to) rates.push(`('USD', date '2020-01-01' + ${k}, 1.1)`);
    }
    await conn.run(`insert into fx_rates (currency, date, rate) values ${rates.join(', ')}`);
  });
  return { REFERENCE_DIR: referenceDir, DUCKDB_PATH: join(dir, 'replica.duckdb'), REFERENCE_RELOAD_MS: '0' };
}

describe('future performance from historical returns', function () {
  this.timeout(60_000);
  let env: Record<string, string>;
  let duck: DuckStore;
  let platform: TestPlatform;
  let client: ReturnType<typeof dataClient>;

  before(async () => {
    env = await buildPrices();
    duck = await openDuckStore({ path: join(env.REFERENCE_DIR!, '..', 'direct.duckdb'), referenceDir: env.REFERENCE_DIR!, connections: 1 });
    platform = await startTestPlatform(env);
    client = dataClient(platform.dataUrl, await platform.tenant());
  });
  after(async () => {
    await platform?.stop();
    await duck?.close();
  });

  const request = (mapping: Record<string, string>, extra: Record<string, unknown> = {}) => ({
    asset_classes: Object.fromEntries(Object.keys(mapping).map((c) => [c, [0.5, 0.5]])),
    start_date: '2025-01-01',
    end_date: '2026-01-01',
    start_amount: 1000,
    sample_frequency: 'Y',
    use_expected_returns: false,
    asset_class_mapping: mapping,
    scenarios: 1000,
    seed: 1,
    ...extra,
  });

  it('estimates annual parameters and correlations from the common daily closes', async () => {
    const classes = ['FLAT', 'ZIG', 'ZIG_TOO', 'ANTI'];
    const isins = [FLAT, ZIG, ZIG_TOO, ANTI];
    const history = await commonCloses(duck, isins);
    assert.equal(history.days.length, CLOSES);
    assert.equal(history.days[0], FIRST);
    const { parameters, correlation } = estimateFromHistory(classes, isins, history);
    const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);
    // Constant returns: 5 % a year, no volatility.
    close(parameters[0]!.mean, 0.05, 'flat mean');
    close(parameters[0]!.stdev, 0, 'flat stdev');
    // ±A around B over 366 returns: mean B, sample variance A²·366/365, 365.25 returns a year.
    const { mu, sigma } = logParameters(parameters[1]!);
    close(mu, B * 365.25, 'zig log mean');
    close(sigma, Math.sqrt(((A * A * 366) / 365) * 365.25), 'zig log stdev');
    assert.deepEqual(parameters[2], parameters[1]);
    close(logParameters(parameters[3]!).mu, B * 365.25, 'anti log mean');
    const rho = (i: number, j: number) => correlation[i * 4 + j]!;
    close(rho(1, 2), 1, 'same series');
    close(rho(1, 3), -1, 'mirrored series');
    assert.equal(rho(0, 1), 0, 'no correlation with a price growing at a constant rate');
    assert.equal(parameters[0]!.stdev, 0);
    assert.equal(rho(2, 2), 1);
  });

  it('simulates with the estimates: a price that grew 5 % a year without volatility gives one deterministic path', async () => {
    const res = await client.post('/performance/future/', request({ FIXED_INCOME: FLAT }, { quantiles: [0.05, 0.5, 0.95] }));
    assert.equal(res.status, 200, res.text);
    const expected = Math.round(1000 * 1.05 ** (365 / 365.25) * 100) / 100;
    for (const q of ['0.05', '0.5', '0.95']) assert.deepEqual(res.body.data.value[q], { '2025-01-01': 1000, '2026-01-01': expected });
    assert.deepEqual(res.body.data.deposits.deposits, { '2025-01-01': 1000, '2026-01-01': 1000 });
  });

  it('keeps the estimated correlation: mirrored series offset each other, identical ones do not', async () => {
    const spread = async (mapping: Record<string, string>) => {
      const res = await client.post('/performance/future/', request(mapping, { quantiles: [0.05, 0.95], sample_frequency: 'M' }));
      assert.equal(res.status, 200, res.text);
      return res.body.data.value['0.95']['2026-01-01'] - res.body.data.value['0.05']['2026-01-01'];
    };
    const together = await spread({ EQUITY: ZIG, OTHER: ZIG_TOO });
    const mirrored = await spread({ EQUITY: ZIG, OTHER: ANTI });
    assert.ok(together > 200, `identical series: 90 % of outcomes within ${together}`);
    assert.ok(mirrored < together / 10, `mirrored series: ${mirrored} against ${together}`);
  });

  it("converts the closes to the request's currency: a flat GBP instrument earns a EUR investor the pound's 5 % a year", async () => {
    const inEur = await client.post('/performance/future/', request({ EQUITY: IN_GBP }, { currency: 'EUR', quantiles: [0.05, 0.5, 0.95] }));
    assert.equal(inEur.status, 200, inEur.text);
    const expected = Math.round(1000 * 1.05 ** (365 / 365.25) * 100) / 100;
    for (const q of ['0.05', '0.5', '0.95']) assert.deepEqual(inEur.body.data.value[q], { '2025-01-01': 1000, '2026-01-01': expected });
    // In pounds (or without a currency) it stays flat.
    for (const extra of [{ currency: 'GBP' }, {}]) {
      const flat = await client.post('/performance/future/', request({ EQUITY: IN_GBP }, { ...extra, quantiles: [0.5] }));
      assert.deepEqual(flat.body.data.value['0.5'], { '2025-01-01': 1000, '2026-01-01': 1000 });
    }
  });

  it('refuses a history with a stale rate at its mapping entry, naming the pair and the first date without a fresh rate', async () => {
    const res = await client.post('/performance/future/', request({ BONDS: FLAT, EQUITY: IN_USD }, { currency: 'EUR' }));
    assertProblem(res, 422, 'unknown_field');
    assert.deepEqual(res.body.errors[0].loc, ['body', 'asset_class_mapping', 'EQUITY']);
    assert.match(res.body.errors[0].msg, /EUR\/USD rate of 2020-04-10 is older than 5 days on 2020-04-16 \(for USD\/EUR\)/);
    // In dollars nothing needs converting, and the instrument's closes alone answer.
    const inUsd = await client.post('/performance/future/', request({ EQUITY: IN_USD }, { currency: 'USD', quantiles: [0.5] }));
    assert.equal(inUsd.status, 200, inUsd.text);
    assert.deepEqual(inUsd.body.data.value['0.5'], { '2025-01-01': 1000, '2026-01-01': 1000 });
  });

  it('refuses an unknown instrument, too short a history and histories without enough common dates (422 unknown_field)', async () => {
    const refused = async (mapping: Record<string, string>) => {
      const res = await client.post('/performance/future/', request(mapping));
      assertProblem(res, 422, 'unknown_field');
      return res.body.errors[0].loc;
    };
    assert.deepEqual(await refused({ EQUITY: ZIG, FIXED_INCOME: UNKNOWN }), ['body', 'asset_class_mapping', 'FIXED_INCOME']);
    assert.deepEqual(await refused({ EQUITY: SHORT, FIXED_INCOME: FLAT }), ['body', 'asset_class_mapping', 'EQUITY']);
    assert.deepEqual(await refused({ EQUITY: EARLY, FIXED_INCOME: LATE }), ['body', 'asset_class_mapping', 'EQUITY']);
    // A missing mapping is a request the contract refuses (validation_failed), before any read.
    const missing = await client.post('/performance/future/', { ...request({ EQUITY: ZIG }), asset_classes: { EQUITY: [0.5, 0.5], FIXED_INCOME: [0.5, 0.5] } });
    assertProblem(missing, 422, 'validation_failed');
    assert.deepEqual(missing.body.errors[0].loc, ['body', 'asset_class_mapping', 'FIXED_INCOME']);
  });
});
