import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createLogger, newUlid } from '@platform/shared';
import { testWorkDir } from '@platform/test-support/database';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { loadDataConfig } from '../src/config.ts';
import { startDataService } from '../src/service.ts';
import { futurePerformanceAnswer } from '../src/simulation/answer.ts';
import { simulate } from '../src/simulation/engine.ts';
import { planSimulation, type FuturePerformanceRequest } from '../src/simulation/request.ts';
import { dataClient } from './support/data-client.ts';

// POST /performance/future/ over HTTP (expected returns): the vendor's sample in the contract's
// shape, defaults, reproducibility, and every refusal with the `loc` of the offending value. The
// statistics are tested on the engine in process (simulation-engine.test.ts).

const PATH = '/performance/future/';

/** The vendor's sample: EQUITY [0.8, 1] / FIXED_INCOME [0, 0.2], start 1000 plus 50 monthly. */
const VENDOR = {
  asset_classes: { EQUITY: [0.8, 1], FIXED_INCOME: [0, 0.2] },
  start_date: '2022-01-31',
  end_date: '2022-12-31',
  currency: 'EUR',
  start_amount: 1000,
  recurring_deposit_amount: 50,
  recurring_deposit_frequency: 'M',
  sample_frequency: 'M',
  quantiles: [0.05, 0.5, 0.95],
  use_expected_returns: true,
  asset_class_st_mean_and_stdev: { EQUITY: { mean: 0.07, stdev: 0.16 }, FIXED_INCOME: { mean: 0.03, stdev: 0.05 } },
  asset_class_lt_mean_and_stdev: { EQUITY: { mean: 0.06, stdev: 0.15 }, FIXED_INCOME: { mean: 0.025, stdev: 0.04 } },
  short_to_long_term_transition_cut_off: 5,
  scenarios: 2000,
  seed: 42,
  asset_class_correlations: { EQUITY: { FIXED_INCOME: 0.2 } },
};

const MONTH_ENDS = [
  '2022-01-31',
  '2022-02-28',
  '2022-03-31',
  '2022-04-30',
  '2022-05-31',
  '2022-06-30',
  '2022-07-31',
  '2022-08-31',
  '2022-09-30',
  '2022-10-31',
  '2022-11-30',
  '2022-12-31',
];

describe('future performance over HTTP', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let client: ReturnType<typeof dataClient>;

  before(async () => {
    platform = await startTestPlatform({ SIMULATION_THREADS: '2' });
    tenant = await platform.tenant();
    client = dataClient(platform.dataUrl, tenant);
  });
  after(() => platform?.stop());

  const refused = async (body: unknown, code = 'validation_failed') => {
    const res = await client.post(PATH, body);
    assertProblem(res, 422, code);
    return res.body.errors[0].loc as (string | number)[];
  };

  it("answers the vendor's sample: 1050 on the start date in every quantile, deposits 50 a month up to 600 more, return = value − deposits", async () => {
    const res = await client.post(PATH, VENDOR);
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const { data, meta } = res.body;
    assert.equal(meta, null);
    assert.deepEqual(Object.keys(data), ['value', 'deposits', 'return']);
    assert.deepEqual(Object.keys(data.value), ['0.05', '0.5', '0.95']);
    assert.deepEqual(Object.keys(data.return), ['0.05', '0.5', '0.95']);
    assert.deepEqual(Object.keys(data.deposits), ['deposits']);
    const deposits = data.deposits.deposits as Record<string, number>;
    assert.deepEqual(Object.keys(deposits), MONTH_ENDS);
    // Cumulative deposits include the start amount (the contract: 1050 on the start date).
    assert.deepEqual(
      Object.values(deposits),
      MONTH_ENDS.map((_, k) => 1050 + 50 * k),
    );
    assert.equal(deposits['2022-12-31']! - 1000, 600);
    for (const q of ['0.05', '0.5', '0.95']) {
      assert.deepEqual(Object.keys(data.value[q]), MONTH_ENDS);
      assert.equal(data.value[q]['2022-01-31'], 1050);
      assert.equal(data.return[q]['2022-01-31'], 0);
      for (const date of MONTH_ENDS) {
        // Each figure is in cents, rounded from the exact one.
        assert.ok(Math.abs(data.return[q][date] - (data.value[q][date] - deposits[date]!)) <= 0.01 + 1e-9, `${q} ${date}`);
      }
    }
    for (const date of MONTH_ENDS.slice(1)) {
      assert.ok(data.value['0.05'][date] < data.value['0.5'][date] && data.value['0.5'][date] < data.value['0.95'][date], `ordered on ${date}`);
    }
  });

  it("answers byte-identical JSON for the same seed (the engine's answer in process, to the byte), and other numbers for another seed", async () => {
    const [a, b, c] = await Promise.all([client.post(PATH, VENDOR), client.post(PATH, VENDOR), client.post(PATH, { ...VENDOR, seed: 43 })]);
    assert.equal(a.status, 200);
    assert.equal(a.text, b.text);
    assert.notEqual(a.text, c.text);
    // The worker thread's answer is the engine's in this process, to the byte.
    const plan = planSimulation(VENDOR as FuturePerformanceRequest, { maxCells: Infinity }, () => 0);
    assert.equal(plan.source.kind, 'expected');
    const input = { ...plan.base, ...(plan.source as Extract<typeof plan.source, { kind: 'expected' }>) };
    assert.equal(a.text, JSON.stringify(futurePerformanceAnswer(simulate(input, plan.grid), plan.base.quantiles)));
  });

  it('answers the same bytes on 1 thread as on 2 (a replica started with SIMULATION_THREADS=1)', async () => {
    const replica = await startDataService(
      loadDataConfig({
        // In the tests' event loop, like the test platform's services (test-support/src/platform.ts).
        OVERLOAD_SHEDDING: 'false',
        HOST: '127.0.0.1',
        PORT: '0',
        METRICS_PORT: '0',
        DATABASE_URL: platform.database.url,
        NATS_URL: platform.natsUrl,
        OPTIMIZER: 'false',
        DUCKDB_PATH: join(testWorkDir(), `data-${newUlid()}.duckdb`),
        REFERENCE_DIR: join(testWorkDir(), 'reference'),
        SIMULATION_THREADS: '1',
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
      }),
      createLogger('test', process.env.LOG_LEVEL ?? 'error'),
    );
    try {
      // 10,000 scenarios (40 blocks) × 3 years of daily samples: several chunks, each cut in two on 2 threads.
      const body = { ...VENDOR, scenarios: 10_000, end_date: '2025-01-31', sample_frequency: 'D', seed: 5 };
      const [two, one] = await Promise.all([client.post(PATH, body), dataClient(replica.url, tenant).post(PATH, body)]);
      assert.equal(two.status, 200, two.text);
      assert.equal(one.status, 200, one.text);
      assert.equal(one.text.length, two.text.length);
      assert.ok(one.text === two.text, 'the same bytes');
    } finally {
      await replica.stop();
    }
  });

  it('fills in the defaults: quantiles 0.05/0.5/0.95, monthly samples, no deposits; any order of quantiles is kept', async () => {
    const res = await client.post(PATH, {
      asset_classes: { EQUITY: [0.5, 0.5] },
      start_date: '2024-01-15',
      end_date: '2024-04-01',
      asset_class_st_mean_and_stdev: { EQUITY: { mean: 0.05, stdev: 0.1 } },
      scenarios: 100,
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body.data.value), ['0.05', '0.5', '0.95']);
    assert.deepEqual(res.body.data.deposits.deposits, { '2024-01-15': 0, '2024-02-15': 0, '2024-03-15': 0, '2024-04-01': 0 });
    const ordered = await client.post(PATH, { ...VENDOR, quantiles: [0.9, 0.1, 0.5] });
    assert.deepEqual(Object.keys(ordered.body.data.value), ['0.9', '0.1', '0.5']);
    assert.ok(ordered.body.data.value['0.1']['2022-12-31'] < ordered.body.data.value['0.9']['2022-12-31']);
  });

  it('simulates on a worker thread: the replica answers other requests while a simulation runs', async () => {
    // About a second of simulation (10,000 scenarios × 3 years of daily steps × 2 classes).
    let simulated = false;
    const simulation = client.post(PATH, { ...VENDOR, scenarios: 10_000, end_date: '2025-01-31', sample_frequency: 'D' }).then((res) => {
      simulated = true;
      return res;
    });
    // On the event loop, every call after the first would wait for the simulation to finish.
    for (let i = 0; i < 5; i++) assert.equal((await fetch(`${platform.dataUrl}/livez`)).status, 200);
    assert.equal(simulated, false, 'five health checks answered while the simulation ran');
    assert.equal((await simulation).status, 200);
  });

  it('refuses bad requests with 422 naming the offending value', async () => {
    assert.deepEqual(await refused({ ...VENDOR, end_date: '2022-01-31' }), ['body', 'end_date']);
    assert.deepEqual(await refused({ ...VENDOR, end_date: '2021-12-31' }), ['body', 'end_date']);
    assert.deepEqual(await refused({ ...VENDOR, end_date: '2122-02-01' }), ['body', 'end_date']);
    assert.deepEqual(await refused({ ...VENDOR, asset_classes: {} }), ['body', 'asset_classes']);
    assert.deepEqual(await refused({ ...VENDOR, asset_classes: { EQUITY: [0.8, 1.2], FIXED_INCOME: [0, 0.2] } }), ['body', 'asset_classes', 'EQUITY', 1]);
    assert.deepEqual(await refused({ ...VENDOR, asset_classes: { EQUITY: [-0.1, 1], FIXED_INCOME: [0, 0.2] } }), ['body', 'asset_classes', 'EQUITY', 0]);
    assert.deepEqual(await refused({ ...VENDOR, asset_classes: { EQUITY: [1, 0.8], FIXED_INCOME: [0, 0.2] } }), ['body', 'asset_classes', 'EQUITY']);
    assert.deepEqual(await refused({ ...VENDOR, asset_classes: { EQUITY: [0, 0], FIXED_INCOME: [0, 0] } }), ['body', 'asset_classes']);
    assert.deepEqual(await refused({ ...VENDOR, sample_frequency: 'Q' }), ['body', 'sample_frequency']);
    assert.deepEqual(await refused({ ...VENDOR, recurring_deposit_frequency: 'monthly' }), ['body', 'recurring_deposit_frequency']);
    assert.deepEqual(await refused({ ...VENDOR, quantiles: [0.5, 1] }), ['body', 'quantiles', 1]);
    assert.deepEqual(await refused({ ...VENDOR, quantiles: [0, 0.5] }), ['body', 'quantiles', 0]);
    assert.deepEqual(await refused({ ...VENDOR, asset_class_st_mean_and_stdev: { EQUITY: { mean: 0.07, stdev: 0.16 } } }), [
      'body',
      'asset_class_st_mean_and_stdev',
      'FIXED_INCOME',
    ]);
    assert.deepEqual(
      await refused({ ...VENDOR, asset_class_st_mean_and_stdev: { ...VENDOR.asset_class_st_mean_and_stdev, EQUITY: { mean: -1, stdev: 0.16 } } }),
      ['body', 'asset_class_st_mean_and_stdev', 'EQUITY', 'mean'],
    );
    const three = {
      ...VENDOR,
      asset_classes: { A: [0.3, 0.3], B: [0.3, 0.3], C: [0.3, 0.3] },
      asset_class_st_mean_and_stdev: { A: { mean: 0.05, stdev: 0.1 }, B: { mean: 0.05, stdev: 0.1 }, C: { mean: 0.05, stdev: 0.1 } },
      asset_class_lt_mean_and_stdev: undefined,
    };
    assert.equal((await client.post(PATH, { ...three, asset_class_correlations: { A: { B: 0.9, C: 0.9 }, B: { C: 0.9 } } })).status, 200);
    assert.deepEqual(await refused({ ...three, asset_class_correlations: { A: { B: 0.9, C: 0.9 }, B: { C: -0.9 } } }), ['body', 'asset_class_correlations']);
    assert.deepEqual(await refused({ ...three, asset_class_correlations: { A: { B: 0.5 }, B: { A: 0.4 } } }), ['body', 'asset_class_correlations', 'B', 'A']);
    assert.deepEqual(await refused({ ...three, asset_class_correlations: { A: { A: 0.5 } } }), ['body', 'asset_class_correlations', 'A', 'A']);
    assert.deepEqual(await refused({ ...three, asset_class_correlations: { A: { B: 1.5 } } }), ['body', 'asset_class_correlations', 'A', 'B']);
    // 100,000 scenarios × 36,525 daily steps × 2 classes: far beyond SIMULATION_MAX_CELLS, refused before running.
    const tooMany = await client.post(PATH, { ...VENDOR, scenarios: 100_000, end_date: '2122-01-30', sample_frequency: 'D' });
    assertProblem(tooMany, 422, 'validation_failed');
    assert.deepEqual(tooMany.body.errors[0].loc, ['body', 'scenarios']);
    assert.match(tooMany.body.detail, /exceeds this service's limit/);
    assert.deepEqual(await refused({ ...VENDOR, use_expected_returns: false, asset_class_mapping: { EQUITY: 'IE00B4L5Y983' } }), [
      'body',
      'asset_class_mapping',
      'FIXED_INCOME',
    ]);
  });
});
