import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { connectNats, createLogger, type NatsConnection } from '@platform/shared';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { startRelay } from '../src/events/relay.ts';

// docs/adr/0024-observability.md: GET /metrics of both services, on their METRICS_PORT, without
// credentials, in the Prometheus text format, with the series named there.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The value of one series of a Prometheus text answer whose labels include `labels` (undefined when absent). */
function series(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length, line.lastIndexOf(' '));
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('metrics of both services', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let api: Api;

  const scrape = async (service: 'management' | 'data') => {
    const res = await fetch(`${platform.metricsUrls[service]}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return res.text();
  };
  const unpublishedInDb = async () => Number((await platform.database.db('outbox').whereNull('published_at').count({ n: '*' }))[0]!.n);

  before(async () => {
    // No relay: the outbox keeps what the requests write until the test publishes it.
    platform = await startTestPlatform({ OUTBOX_RELAY: 'false' });
    tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
  });
  after(() => platform?.stop());

  it('answers GET /metrics only, without credentials, and not on the interface’s port', async () => {
    const text = await scrape('management');
    assert.match(text, /^# HELP process_cpu_user_seconds_total/m, "the process's default metrics");
    assert.match(text, /^# TYPE http_request_duration_seconds histogram$/m);
    for (const state of ['total', 'idle', 'waiting']) assert.notEqual(series(text, 'db_pool_connections', { state }), undefined, state);
    for (const name of ['outbox_unpublished_events', 'outbox_lag_seconds', 'optimizer_requests_pending', 'broker_instructions_pending']) {
      assert.notEqual(series(text, name, { service: 'management-service' }), undefined, name);
    }
    assert.equal(series(text, 'optimizer_nightly_last_run_timestamp_seconds'), 0, 'no nightly batch ran yet');
    assert.equal((await fetch(`${platform.metricsUrls.management}/other`)).status, 404);
    assert.equal((await fetch(`${platform.metricsUrls.management}/metrics`, { method: 'POST' })).status, 404);
    const onInterface = await fetch(`${platform.managementUrl}/metrics`);
    assert.equal(onInterface.status, 404, 'the public interface has no /metrics');
  });

  it('times requests by operationId and status, never by their path', async () => {
    const before = await scrape('management');
    const user = await api('POST', '/users/', build.user());
    assert.equal(user.status, 201);
    assert.equal((await api('GET', `/users/${user.body.id}`)).status, 200);
    assert.equal((await api('GET', `/users/${user.body.id}`)).status, 200);
    assert.equal((await api('POST', '/portfolios/', { name: 'no owner' })).status, 422);
    assert.equal((await api('GET', '/no-such-route-7')).status, 404);
    const after = await scrape('management');
    const moved = (labels: Record<string, string>) =>
      (series(after, 'http_request_duration_seconds_count', labels) ?? 0) - (series(before, 'http_request_duration_seconds_count', labels) ?? 0);
    assert.equal(moved({ operation: 'createUser', status: '201' }), 1);
    assert.equal(moved({ operation: 'getUser', status: '200' }), 2);
    assert.equal(moved({ operation: 'createPortfolio', status: '422' }), 1);
    assert.equal(moved({ operation: 'unmatched', status: '404' }), 1);
    assert.ok(!after.includes(user.body.id) && !after.includes('no-such-route'), 'no path or id becomes a label');
  });

  it('counts the database round trips of each request by operationId (docs/adr/0031-http-hot-path.md)', async () => {
    const before = await scrape('management');
    const owner = (await api('POST', '/users/', build.user())).body;
    const portfolio = (await api('POST', '/portfolios/', build.portfolio(owner.id))).body;
    assert.equal((await api('GET', `/portfolios/${portfolio.id}`)).status, 200);
    assert.equal((await api('PATCH', `/portfolios/${portfolio.id}`, { name: 'renamed' })).status, 200);
    assert.equal((await fetch(`${platform.managementUrl}/livez`)).status, 200);
    const after = await scrape('management');
    const trips = (operation: string) => {
      const moved = (name: string) => (series(after, name, { operation }) ?? 0) - (series(before, name, { operation }) ?? 0);
      return { requests: moved('http_request_database_round_trips_count'), roundTrips: moved('http_request_database_round_trips_sum') };
    };
    assert.deepEqual(trips('livez'), { requests: 1, roundTrips: 0 });
    assert.deepEqual(trips('getPortfolio'), { requests: 1, roundTrips: 1 }, 'tenant scope and read in one round trip');
    // Scope with the first statement; the event with the COMMIT.
    for (const operation of ['createPortfolio', 'updatePortfolio']) {
      const { requests, roundTrips } = trips(operation);
      assert.equal(requests, 1, operation);
      assert.ok(roundTrips >= 2 && roundTrips <= 4, `${operation}: ${roundTrips} round trips`);
    }
  });

  it('counts the unpublished outbox rows and their age, and sees them published', async () => {
    const before = await scrape('management');
    const owner = (await api('POST', '/users/', build.user())).body;
    assert.equal((await api('POST', '/portfolios/', build.portfolio(owner.id))).status, 201);
    assert.equal((await api('POST', '/portfolios/', build.portfolio(owner.id))).status, 201);
    await sleep(50);
    const waiting = await scrape('management');
    assert.equal(series(waiting, 'outbox_unpublished_events'), (series(before, 'outbox_unpublished_events') ?? 0) + 2, 'one event per portfolio');
    assert.equal(series(waiting, 'outbox_unpublished_events'), await unpublishedInDb());
    assert.ok(series(waiting, 'outbox_lag_seconds')! >= 0.05, 'the oldest waits since its write');

    const nats: NatsConnection = await connectNats(platform.natsUrl, 'metrics-test');
    const relay = await startRelay({
      db: platform.database.db,
      databaseUrl: platform.database.url,
      nats,
      logger: createLogger('test', 'error'),
      pollMs: 50,
    });
    try {
      const until = Date.now() + 10_000;
      let text = await scrape('management');
      while (series(text, 'outbox_unpublished_events') !== 0 && Date.now() < until) {
        await sleep(50);
        text = await scrape('management');
      }
      assert.equal(series(text, 'outbox_unpublished_events'), 0, 'all published');
      assert.equal(series(text, 'outbox_lag_seconds'), 0);
    } finally {
      await relay.stop();
      await nats.close();
    }
  });

  it('reads the last nightly batch', async () => {
    const finished = new Date('2026-03-02T02:00:07.000Z');
    await platform.database
      .db('optimizer_nightly_runs')
      .insert({ day: '2026-03-02', started_at: '2026-03-02T02:00:00.000Z', finished_at: finished.toISOString(), tenants: 1, portfolios: 9, requested: 7 });
    const text = await scrape('management');
    assert.equal(series(text, 'optimizer_nightly_last_run_timestamp_seconds'), finished.getTime() / 1000);
    assert.equal(series(text, 'optimizer_nightly_last_run_requested'), 7);
  });

  it('the data service’s: the reference version, its Postgres pool and its requests', async () => {
    const headers = { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey };
    const res = await fetch(`${platform.dataUrl}/data/reference/universe/?universe_name=GLOBAL&fields=NAME`, { headers });
    assert.equal(res.status, 200);
    const text = await scrape('data');
    const info = text.split('\n').find((l) => l.startsWith('reference_data_info{'));
    assert.match(info ?? '', /version="[^"]+".* 1$/, 'one info series labelled with the version');
    assert.notEqual(series(text, 'db_pool_connections', { state: 'total', service: 'data-service' }), undefined);
    assert.equal(series(text, 'http_request_duration_seconds_count', { operation: 'getReferenceUniverse', status: '200' }), 1);
    assert.match(text, /^# TYPE optimizer_solve_duration_seconds histogram$/m);
    assert.match(text, /^# TYPE simulation_duration_seconds histogram$/m);
    assert.equal(series(text, 'outbox_unpublished_events'), undefined, "the management service's series are not the data service's");
  });
});

/** An IPv4 address of this machine that is not loopback, when it has one. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((i) => i?.family === 'IPv4' && !i.internal)?.address;
}

/** Whether a TCP connection to `address`:`port` is accepted. */
function accepts(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const portOf = (url: string) => Number(new URL(url).port);

describe('the metrics listeners’ address (METRICS_HOST)', function () {
  this.timeout(60_000);
  const outside = outsideAddress();

  it('is loopback by default, even when the interface listens on every address', async () => {
    const platform = await startTestPlatform({ HOST: '0.0.0.0' });
    try {
      for (const url of Object.values(platform.metricsUrls)) {
        assert.equal(new URL(url).hostname, '127.0.0.1');
        assert.equal((await fetch(`${url}/metrics`)).status, 200);
      }
      if (outside) {
        assert.equal(await accepts(outside, portOf(platform.managementUrl)), true, `the interface answers on ${outside}`);
        for (const url of Object.values(platform.metricsUrls)) assert.equal(await accepts(outside, portOf(url)), false, `${url} refuses ${outside}`);
      }
    } finally {
      await platform.stop();
    }
  });

  it('follows METRICS_HOST', async () => {
    const platform = await startTestPlatform({ METRICS_HOST: '0.0.0.0' });
    try {
      for (const url of Object.values(platform.metricsUrls)) {
        assert.equal(new URL(url).hostname, '0.0.0.0');
        if (outside) assert.equal((await fetch(`http://${outside}:${portOf(url)}/metrics`)).status, 200);
      }
    } finally {
      await platform.stop();
    }
  });
});
