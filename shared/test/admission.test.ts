import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Registry } from 'prom-client';
import { startAdmission, type Admission } from '../src/http/admission.ts';
import { requestScope } from '../src/http/request-scope.ts';
import { createLogger } from '../src/logger.ts';

// The admission middleware with its real sampler (docs/adr/0062-overload-shedding.md): requests held
// in flight, then the event loop blocked by the test itself, as a burst of work would block it.
describe('admission control on a late event loop', () => {
  let admission: Admission;
  let server: Server;
  let url: string;
  const registry = new Registry();
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let handled = 0;

  before(async () => {
    // A floor of 4, so that the 12 requests held are more than twice it and the limit may fall.
    admission = startAdmission({ eventLoopDelayTargetMs: 50, registry, limits: { minLimit: 4 } });
    const app = express();
    app.use(requestScope({ logger: createLogger('test', 'error') }));
    app.use(admission.middleware);
    app.get('/livez', (_req, res) => void res.json({ status: 'ok' }));
    app.get('/held', async (_req, res) => {
      handled++;
      await held;
      res.json({ ok: true });
    });
    app.get('/quick', (_req, res) => void res.json({ ok: true }));
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    release();
    admission?.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('sheds with 503 unavailable and Retry-After while the loop is late and requests are in flight, never /livez, and serves the admitted', async () => {
    const inFlight = Array.from({ length: 12 }, () => fetch(`${url}/held`));
    for (let i = 0; i < 200 && handled < 12; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(handled, 12, 'the 12 requests are in flight');
    assert.equal((await fetch(`${url}/quick`)).status, 200, 'admitted before the loop is late');

    // The test blocks the event loop for 300 ms: the sampler's next tick comes that late.
    const until = performance.now() + 300;
    while (performance.now() < until);
    await new Promise((r) => setTimeout(r, 2 * 50));

    const shed = await fetch(`${url}/quick`);
    const text = await shed.text();
    assert.equal(shed.status, 503, text);
    assert.equal(shed.headers.get('retry-after'), '1');
    assert.match(shed.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const body = JSON.parse(text);
    assert.equal(body.code, 'unavailable');
    assert.equal(body.request_id, shed.headers.get('x-request-id'));
    assert.ok(admission.limit.limit < 12, `the limit (${admission.limit.limit}) fell under the 12 in flight`);
    assert.equal((await fetch(`${url}/livez`)).status, 200, '/livez is never shed');

    release();
    const answers = await Promise.all(inFlight);
    assert.deepEqual(
      answers.map((a) => a.status),
      answers.map(() => 200),
    );
    const metrics = await registry.metrics();
    assert.match(metrics, /http_requests_shed_total\{reason="event_loop"\} [1-9]/);
    assert.match(metrics, /http_admission_limit \d+/);
    assert.equal(admission.limit.inFlight, 0, 'every admitted request was released');
  });
});
