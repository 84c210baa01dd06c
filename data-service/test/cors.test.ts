import assert from 'node:assert/strict';
import { ConfigError } from '@platform/shared';
import { call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { loadDataConfig } from '../src/config.ts';

// docs/adr/0037-console-and-the-data-service.md: browser pages of the configured origins (the
// administration console) may call the data service; every other origin gets no CORS header.

const CONSOLE = 'http://console.example.test:8080';
const FOREIGN = 'http://evil.example.test';
const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers'];
const corsHeaders = (headers: Headers) => CORS_HEADERS.filter((name) => headers.has(name));

describe('data service: CORS for the configured origins', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  const keys = () => ({ 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey });
  const preflight = (origin: string, path = '/performance/future/') =>
    call(`${platform.dataUrl}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-api-key, x-tenant-id' },
    });

  before(async () => {
    platform = await startTestPlatform({ CORS_ALLOWED_ORIGINS: `${CONSOLE},http://127.0.0.1:9` });
    tenant = await platform.tenant();
  });
  after(() => platform.stop());

  it("answers an allowed origin's preflight before the contract's routing, naming what the page may send", async () => {
    const res = await preflight(CONSOLE);
    assert.equal(res.status, 204, res.text);
    assert.equal(res.headers.get('access-control-allow-origin'), CONSOLE);
    assert.match(res.headers.get('access-control-allow-methods')!, /\bPOST\b/);
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase();
    for (const header of ['content-type', 'x-api-key', 'x-tenant-id']) assert.ok(allowed.includes(header), allowed);
    assert.match(res.headers.get('vary') ?? '', /Origin/);
  });

  it("marks an allowed origin's answers, errors too, and lets the page read the request id", async () => {
    const ok = await call(`${platform.dataUrl}/xray/universe/?universe_name=ROBO&fields=VALUE_STARS`, { headers: { origin: CONSOLE, ...keys() } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.headers.get('access-control-allow-origin'), CONSOLE);
    assert.match(ok.headers.get('access-control-expose-headers')!, /X-Request-Id/);
    const refused = await call(`${platform.dataUrl}/xray/universe/?universe_name=ROBO&fields=VALUE_STARS`, {
      headers: { origin: CONSOLE, 'x-tenant-id': tenant.tenantId },
    });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('access-control-allow-origin'), CONSOLE);
  });

  it('gives a foreign origin no CORS header: its preflight is an ordinary OPTIONS request (405), its answers unmarked', async () => {
    const res = await preflight(FOREIGN);
    assert.equal(res.status, 405, res.text);
    assert.deepEqual(corsHeaders(res.headers), []);
    const answer = await call(`${platform.dataUrl}/xray/universe/?universe_name=ROBO&fields=VALUE_STARS`, { headers: { origin: FOREIGN, ...keys() } });
    assert.equal(answer.status, 200);
    assert.deepEqual(corsHeaders(answer.headers), []);
    // An origin that only starts like an allowed one is another origin.
    assert.deepEqual(corsHeaders((await preflight(`${CONSOLE}0`)).headers), []);
    assert.deepEqual(corsHeaders((await preflight('null')).headers), []);
  });

  it('allows no origin by default', async () => {
    const plain = await startTestPlatform();
    try {
      const res = await call(`${plain.dataUrl}/performance/future/`, {
        method: 'OPTIONS',
        headers: { origin: CONSOLE, 'access-control-request-method': 'POST' },
      });
      assert.equal(res.status, 405);
      assert.deepEqual(corsHeaders(res.headers), []);
    } finally {
      await plain.stop();
    }
  });
});

describe('data service configuration: CORS_ALLOWED_ORIGINS', () => {
  const required = { DUCKDB_PATH: '/tmp/data.duckdb', DATABASE_URL: 'postgres://h/db', NATS_URL: 'nats://h:4222' };

  it('reads a comma-separated list of origins, none by default', () => {
    assert.deepEqual(loadDataConfig(required).CORS_ALLOWED_ORIGINS, []);
    assert.deepEqual(loadDataConfig({ ...required, CORS_ALLOWED_ORIGINS: 'https://console.example.com, http://127.0.0.1:8080' }).CORS_ALLOWED_ORIGINS, [
      'https://console.example.com',
      'http://127.0.0.1:8080',
    ]);
  });

  it('refuses a path, a trailing slash, a wildcard or another scheme, saying how to write an origin', () => {
    for (const raw of ['https://console.example.com/', 'https://console.example.com/console', '*', 'ftp://x.example', 'console.example.com']) {
      assert.throws(
        () => loadDataConfig({ ...required, CORS_ALLOWED_ORIGINS: raw }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.match(error.problems[0]!, /^CORS_ALLOWED_ORIGINS: ".*" is not an origin: write the scheme, host and port only/);
          return true;
        },
        raw,
      );
    }
  });
});
