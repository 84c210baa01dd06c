import assert from 'node:assert/strict';
import { InMemorySpanExporter, connectNats, createLogger, subjects, type NatsConnection } from '@platform/shared';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { dataClient, managementClient } from '../src/clients.ts';

// docs/adr/0024-observability.md: a request's W3C trace context reaches its log lines, the outbox
// event it caused (as the NATS header the relay publishes), the optimizer request, the data
// service's consumer and the result's way back; both services' /metrics count what happened.

type Line = Record<string, unknown> & { message: string };
type Seen = { subject: string; traceparent: string | undefined; body: Record<string, unknown> };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const traceIdOf = (traceparent: string | undefined) => traceparent?.split('-')[1];
const newTraceparent = () => {
  const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `00-${hex(16)}-${hex(8)}-01`;
};

async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The value of one series in a Prometheus text answer (undefined when absent). */
function series(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).split(' ')[0]!;
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('observability: trace context and metrics across both services', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let bus: NatsConnection;
  const lines: Line[] = [];
  const seen: Seen[] = [];
  const spans = new InMemorySpanExporter();

  before(async () => {
    // The services' own log lines, as objects, instead of the console.
    const logger = createLogger('test', 'info');
    for (const transport of logger.transports) transport.silent = true;
    logger.on('data', (line: Line) => lines.push(line));
    platform = await startTestPlatform({ BROKER_SIMULATED_LATENCY_MS: '5' }, { ownNats: true, logger, spanExporter: spans });
    bus = await connectNats(platform.natsUrl, 'observability-test');
    for (const subject of ['tenants.*.events', subjects.everyOptimizerRequest, subjects.optimizerResults]) {
      const subscription = bus.subscribe(subject);
      void (async () => {
        for await (const m of subscription) seen.push({ subject: m.subject, traceparent: m.headers?.get('traceparent') || undefined, body: m.json() });
      })();
    }
  });
  after(async () => {
    await bus?.close();
    await platform?.stop();
  });

  it('carries a request’s traceparent into its log lines, its event on NATS, the optimizer request and result, and the result’s storing', async () => {
    const tenant = await platform.tenant();
    const login = await managementClient(platform.managementUrl).POST('/auth/login/', {
      body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret },
    });
    const machine = managementClient(platform.managementUrl, login.data!.access_token);

    // A request without traceparent starts a trace of its own.
    const plain = await machine.POST('/users/', { body: { first_name: 'Ada', last_name: 'Lovelace' } });
    assert.equal(plain.response.status, 201);
    const plainRequestId = plain.response.headers.get('x-request-id');
    const plainLine = await eventually('the log line of the request without traceparent', () =>
      lines.find((l) => l.message === 'request' && l.request_id === plainRequestId),
    );
    assert.match(String(plainLine.trace_id), /^[0-9a-f]{32}$/, 'a new trace id');

    // A robo-advised paper portfolio created with a traceparent: the request's log lines and its
    // creation event on NATS carry the trace.
    const reference = await dataClient(platform.dataUrl, tenant.tenantId, tenant.apiKey).GET('/data/reference/universe/', {
      params: { query: { universe_name: 'GLOBAL', fields: ['INSTRUMENT_TYPE', 'ASSET_CLASS', 'CURRENCY', 'PRICE'] } },
    });
    const etfs = Object.entries((reference.data as { data: Record<string, Record<string, unknown>> }).data).filter(
      ([, f]) => f.instrument_type === 'ETF' && f.currency === 'EUR' && typeof f.price === 'number',
    );
    const equity = etfs.find(([, f]) => f.asset_class === 'EQUITY')![0];
    const bonds = etfs.find(([, f]) => f.asset_class === 'FIXED_INCOME')![0];
    const policy = await machine.POST('/policies/', {
      body: {
        name: 'Balanced',
        config: {
          minimum_funding_amount: '1000',
          cash_buffer: 0.02,
          rebalancing_threshold: 0.05,
          transaction_cost_bps: 10,
          model_portfolio: { [equity]: 0.6, [bonds]: 0.38 },
          asset_class_bands: { EQUITY: [0.5, 0.7], FIXED_INCOME: [0.28, 0.48] },
        },
      },
    });
    assert.equal(policy.response.status, 201);
    const traceparent = newTraceparent();
    const traceId = traceIdOf(traceparent)!;
    const portfolio = await machine.POST('/portfolios/', {
      body: {
        name: 'Robo',
        owned_by_user_id: plain.data!.id,
        base_currency: 'EUR',
        money_type: 'PAPER_MONEY',
        config: { manager: 'ROBO_ADVISOR_DISCRETIONARY', manager_version: 1, manager_settings: { policy_id: policy.data!.id } },
      },
      headers: { traceparent },
    });
    assert.equal(portfolio.response.status, 201);
    const portfolioId = portfolio.data!.id;
    const requestId = portfolio.response.headers.get('x-request-id');
    const requestLines = lines.filter((l) => l.request_id === requestId);
    assert.ok(requestLines.length > 0, 'the request logged');
    assert.ok(
      requestLines.every((l) => l.trace_id === traceId),
      'every line of the request carries its trace id',
    );
    assert.notEqual(plainLine.trace_id, traceId);
    const event = await eventually('the creation event on NATS', () =>
      seen.find((m) => m.subject === subjects.tenantEvents(tenant.tenantId) && (m.body.data as { id?: string }).id === portfolioId),
    );
    assert.equal(event.body.subject, 'portfolios');
    assert.equal(traceIdOf(event.traceparent), traceId, 'the outbox event carries the trace to NATS');

    // Funded by a PATCH of its cash: that request's trace reaches the optimizer request, the data
    // service's consumer, the result and its storing.
    const metricsBefore = await (await fetch(`${platform.metricsUrls.management}/metrics`)).text();

    const funding = newTraceparent();
    const fundingTrace = traceIdOf(funding)!;
    const patched = await machine.PATCH('/portfolios/{portfolio_id}', {
      params: { path: { portfolio_id: portfolioId } },
      body: { portfolio: { $EUR: 10_000 } },
      headers: { traceparent: funding },
    });
    assert.equal(patched.response.status, 200);
    const request = await eventually('the optimizer request on NATS', () =>
      seen.find((m) => m.subject === subjects.optimizerRequests(String(m.body.tenant_id)) && m.body.portfolio_id === portfolioId),
    );
    assert.equal(traceIdOf(request.traceparent), fundingTrace, 'the optimizer request carries the trace of the request that asked for it');
    const result = await eventually('the optimizer result on NATS', () =>
      seen.find((m) => m.subject === subjects.optimizerResults && m.body.request_id === request.body.request_id),
    );
    assert.equal(traceIdOf(result.traceparent), fundingTrace, 'the result carries it back');
    assert.notEqual(result.traceparent, request.traceparent, "the result's parent is the consumer's span");
    const solved = await eventually('the data service to log the solve', () =>
      lines.find((l) => l.message === 'optimization solved' && l.request === request.body.request_id),
    );
    assert.equal(solved.trace_id, fundingTrace, "the optimizer consumer's log line carries the trace id");
    const stored = await eventually('the management service to store the result', () =>
      lines.find((l) => l.message === 'optimization result stored' && l.request === request.body.request_id),
    );
    assert.equal(stored.trace_id, fundingTrace, "the result consumer's log line carries the trace id");
    assert.equal(stored.status, 'SUCCESS');

    // The spans of that trace: the PATCH, the solve and the storing, one trace across both services.
    const names = await eventually('the spans of the trace', () => {
      const found = spans
        .getFinishedSpans()
        .filter((s) => s.spanContext().traceId === fundingTrace)
        .map((s) => s.name);
      return found.includes('optimizer result') ? found : undefined;
    });
    assert.deepEqual([...new Set(names)].sort(), ['optimizer request', 'optimizer result', 'updatePortfolio']);

    // The optimizer's counters moved by the one optimization.
    const management = await (await fetch(`${platform.metricsUrls.management}/metrics`)).text();
    const storedSuccess = { status: 'SUCCESS', outcome: 'STORED' };
    assert.equal(
      (series(management, 'optimizer_results_total', storedSuccess) ?? 0) - (series(metricsBefore, 'optimizer_results_total', storedSuccess) ?? 0),
      1,
    );
    const data = await (await fetch(`${platform.metricsUrls.data}/metrics`)).text();
    assert.ok((series(data, 'optimizer_solve_duration_seconds_count', { status: 'SUCCESS' }) ?? 0) >= 1, 'the solve is timed');
    assert.equal(
      series(management, 'http_request_duration_seconds_count', { operation: 'updatePortfolio', status: '200' }),
      1,
      'the PATCH counted under its operationId',
    );
    assert.ok(series(management, 'optimizer_requests_pending') !== undefined, 'the pending requests are read');
  });
});
