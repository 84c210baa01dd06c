import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@platform/shared';
import { assertProblem, call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { loadManagementConfig } from '../src/config.ts';

// docs/adr/0036-administration-console.md: the built console at /console/, its config, and a clear
// answer while it is not built. A folder made here stands in for console/dist.

describe('management service: the administration console at /console/', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let dir: string;
  const url = (path: string) => platform.managementUrl + path;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-dist-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>console</title><script type="module" src="/console/assets/index-abc123.js"></script>');
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log("console");');
    platform = await startTestPlatform({ CONSOLE_DIR: dir, CONSOLE_DATA_SERVICE_URL: 'http://data.example.test:8081/' });
  });
  after(async () => {
    await platform.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the page and its assets, the page checked on every load and the hashed assets kept', async () => {
    const page = await call(url('/console/'));
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.match(page.text, /<title>console<\/title>/);
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    const asset = await call(url('/console/assets/index-abc123.js'));
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('content-type')!, /javascript/);
    assert.match(asset.headers.get('cache-control')!, /immutable/);
    const bare = await fetch(url('/console'), { redirect: 'manual' });
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.get('location'), '/console/');
  });

  it('lets the page load from its own origin only and call this service and the data service', async () => {
    const policy = (await call(url('/console/'))).headers.get('content-security-policy')!;
    assert.match(policy, /default-src 'self'/);
    assert.match(policy, /connect-src 'self' http:\/\/data\.example\.test:8081(;|$)/);
    assert.match(policy, /script-src 'self'(;|$)/);
    assert.match(policy, /frame-ancestors 'none'/);
  });

  it('tells the page where the data service answers, without a trailing slash', async () => {
    const config = await call(url('/console/config.json'));
    assert.equal(config.status, 200);
    assert.deepEqual(config.body, { data_service_url: 'http://data.example.test:8081', docs_url: '/docs/' });
    assert.equal(config.headers.get('cache-control'), 'no-store');
  });

  it('answers a file it does not have with a 404 problem, and leaves the interface as it was', async () => {
    const missing = await call(url('/console/assets/nope.js'));
    assertProblem(missing, 404, 'not_found');
    assert.equal(missing.headers.get('x-request-id'), missing.body.request_id);
    assertProblem(await call(url('/consoles')), 404, 'not_found');
    assertProblem(await call(url('/console/'), { method: 'POST', body: {} }), 404, 'not_found');
    assert.equal((await call(url('/livez'))).status, 200);
  });

  it('answers 503 naming the command that builds it while the console is not built', async () => {
    unlinkSync(join(dir, 'index.html'));
    const res = await call(url('/console/'));
    assertProblem(res, 503, 'unavailable');
    assert.match(res.body.detail, /npm run build:console/);
    assert.equal((await call(url('/console/config.json'))).status, 200);
  });
});

describe('management service configuration: CONSOLE_DATA_SERVICE_URL', () => {
  const required = { DATABASE_URL: 'postgres://h/db', NATS_URL: 'nats://h:4222', JWT_PRIVATE_KEY_FILE: '/nonexistent' };

  it('refuses what a browser cannot fetch from, or a URL with a query, saying what to give', () => {
    for (const raw of ['ftp://data.example', 'data.example:8081', 'http://data.example:8081/?x=1']) {
      assert.throws(
        () => loadManagementConfig({ ...required, CONSOLE_DATA_SERVICE_URL: raw }),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, String(error));
          assert.ok(
            error.problems.some((p) => p.startsWith('CONSOLE_DATA_SERVICE_URL: ')),
            error.problems.join('\n'),
          );
          return true;
        },
        raw,
      );
    }
  });
});
