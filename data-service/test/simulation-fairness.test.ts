import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';

// POST /performance/future/ under load from several tenants, with one worker thread: a tenant's
// further runs wait in its own bounded queue while another tenant's run starts at once and shares
// the thread unit by unit, a full queue is a 429, and a run whose client leaves is taken out of the
// queue or stopped on the thread. Orders of completion and the service's own counts are asserted,
// never durations. The order of units on several threads: simulation-threads.test.ts; which runs
// are in progress: simulation-scheduler.test.ts.

const PATH = '/performance/future/';
const QUEUE_PER_TENANT = 3;

/** 10,000 scenarios × `years` of daily steps × 2 classes: about 0.14 s a year on this machine. */
const large = (years: number, seed = 1) => ({
  asset_classes: { EQUITY: [0.8, 1], FIXED_INCOME: [0, 0.2] },
  start_date: '2022-01-31',
  end_date: `${2022 + years}-01-31`,
  start_amount: 1000,
  sample_frequency: 'D',
  quantiles: [0.5],
  scenarios: 10_000,
  seed,
  asset_class_st_mean_and_stdev: { EQUITY: { mean: 0.07, stdev: 0.16 }, FIXED_INCOME: { mean: 0.03, stdev: 0.05 } },
});
const TINY = { ...large(1), end_date: '2022-12-31', sample_frequency: 'M', scenarios: 100 };

describe('future performance: fairness between tenants and cancellation', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let a: TestTenant;
  let b: TestTenant;

  before(async () => {
    platform = await startTestPlatform({ SIMULATION_THREADS: '1', SIMULATION_QUEUE_PER_TENANT: String(QUEUE_PER_TENANT) });
    [a, b] = await Promise.all([platform.tenant(), platform.tenant()]);
  });
  after(() => platform?.stop());

  const simulate = (tenant: TestTenant, body: unknown, signal?: AbortSignal) =>
    fetch(`${platform.dataUrl}${PATH}`, {
      method: 'POST',
      headers: { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    }).then(async (res) => ({ status: res.status, headers: res.headers, text: await res.text() }));

  /** Polls the data service's counts of running and waiting simulations until they match. */
  const counts = async (expected: { running: number; waiting: number }, what: string) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const now = platform.dataService.simulations();
      if (now.running === expected.running && now.waiting === expected.waiting) return;
      if (Date.now() > deadline) assert.fail(`${what}: expected ${JSON.stringify(expected)}, still ${JSON.stringify(now)}`);
      await sleep(10);
    }
  };

  it("starts tenant B's tiny simulation at once beside tenant A's running one and answers it before A's queued ones", async () => {
    const finished: string[] = [];
    const track = (label: string, answer: Promise<{ status: number; text: string }>) =>
      answer.then((res) => {
        assert.equal(res.status, 200, `${label}: ${res.text.slice(0, 300)}`);
        finished.push(label);
      });
    const runs = [track('A1', simulate(a, large(7, 1)))];
    await counts({ running: 1, waiting: 0 }, 'A1 runs');
    // One at a time: two requests sent together may reach the service in either order.
    runs.push(track('A2', simulate(a, large(7, 2))));
    await counts({ running: 1, waiting: 1 }, 'A2 waits');
    runs.push(track('A3', simulate(a, large(7, 3))));
    await counts({ running: 1, waiting: 2 }, 'A2 and A3 wait');
    runs.push(track('B', simulate(b, TINY)));
    await counts({ running: 2, waiting: 2 }, "B's run is in progress beside A1; A2 and A3 wait");
    await Promise.all(runs);
    // First come, first served would be A1, A2, A3, B. B shares the thread with A1 from its arrival
    // (docs/adr/0030-monte-carlo-threads.md); it never waits for a whole run of A.
    assert.deepEqual(
      finished.filter((label) => label !== 'B'),
      ['A1', 'A2', 'A3'],
    );
    assert.ok(finished.indexOf('B') < finished.indexOf('A2'), `B before A2 and A3: ${finished.join(', ')}`);
    await counts({ running: 0, waiting: 0 }, 'all answered');
  });

  it('refuses a run beyond the queue of its tenant with 429 rate_limited and Retry-After, running nothing; the other tenant is still served', async () => {
    const stop = new AbortController();
    const mine = [simulate(a, large(7, 11), stop.signal).catch((error: Error) => error)];
    await counts({ running: 1, waiting: 0 }, "A's first run runs");
    for (let i = 0; i < QUEUE_PER_TENANT; i++) mine.push(simulate(a, large(7, 12 + i), stop.signal).catch((error: Error) => error));
    await counts({ running: 1, waiting: QUEUE_PER_TENANT }, "A's queue is full");

    const refused = await call(`${platform.dataUrl}${PATH}`, { method: 'POST', body: TINY, headers: { 'x-tenant-id': a.tenantId, 'x-api-key': a.apiKey } });
    assertProblem(refused, 429, 'rate_limited');
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    assert.match(refused.body.detail, new RegExp(`already has ${QUEUE_PER_TENANT} simulations waiting`));
    assert.deepEqual(platform.dataService.simulations(), { running: 1, waiting: QUEUE_PER_TENANT }, 'the refused run is not queued');

    const other = simulate(b, TINY);
    await counts({ running: 2, waiting: QUEUE_PER_TENANT }, "B's run is in progress beside A's at once");
    // A's clients leave: their runs leave the queue and the running one stops; B's is answered.
    stop.abort();
    const answer = await other;
    assert.equal(answer.status, 200, answer.text);
    assert.equal(JSON.parse(answer.text).data.value['0.5']['2022-01-31'], 1000);
    for (const result of await Promise.all(mine)) assert.equal((result as Error).name, 'AbortError');
    await counts({ running: 0, waiting: 0 }, 'nothing left');
  });

  it('stops a run whose client disconnects: taken out of the queue while waiting, stopped on its thread after the unit at hand while running, and the next run is answered', async () => {
    // About 3 s of CPU if it ran to the end.
    const running = new AbortController();
    const first = simulate(a, large(20, 21), running.signal).catch((error: Error) => error);
    await counts({ running: 1, waiting: 0 }, 'the large run runs');
    const waiting = new AbortController();
    const second = simulate(a, large(20, 22), waiting.signal).catch((error: Error) => error);
    await counts({ running: 1, waiting: 1 }, 'the second run waits');

    waiting.abort();
    assert.equal(((await second) as Error).name, 'AbortError');
    await counts({ running: 1, waiting: 0 }, 'the waiting run left the queue; the first still runs');

    running.abort();
    assert.equal(((await first) as Error).name, 'AbortError');
    await counts({ running: 0, waiting: 0 }, 'the running run stopped');

    // The worker thread no longer computes: this process (the service's threads included) spends
    // well under one core over a second, where the rest of the run would have kept one core busy.
    const before = process.cpuUsage();
    const started = process.hrtime.bigint();
    await sleep(1000);
    const cpu = process.cpuUsage(before);
    const wallMicros = Number(process.hrtime.bigint() - started) / 1000;
    assert.ok(cpu.user + cpu.system < 0.5 * wallMicros, `CPU ${cpu.user + cpu.system} µs over ${wallMicros} µs of wall time`);

    // The thread takes the next run.
    const next = await simulate(a, TINY);
    assert.equal(next.status, 200, next.text);
    await counts({ running: 0, waiting: 0 }, 'answered');
  });
});
