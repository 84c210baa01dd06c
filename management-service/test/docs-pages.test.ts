import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { contractPath } from '@platform/shared';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

/** Every `src`, `href` and `data-spec` attribute of a page, and every `url(…)` of its styles. */
const references = (html: string) => [
  ...[...html.matchAll(/\s(?:src|href|data-spec|action|srcset|poster)\s*=\s*["']?([^"'\s>]+)/gi)].map((m) => m[1]!),
  ...[...html.matchAll(/url\(\s*["']?([^"')]+)/gi)].map((m) => m[1]!),
];

/** A Content-Security-Policy whose every source stays on the origin: 'self', 'none', inline styles, data: images, blob: workers. */
function offOriginSources(csp: string): string[] {
  return csp
    .split(';')
    .flatMap((directive) => directive.trim().split(/\s+/).slice(1))
    .filter((source) => !["'self'", "'none'", "'unsafe-inline'", 'data:', 'blob:'].includes(source));
}

describe('API reference pages at /docs/', () => {
  let platform: TestPlatform;
  before(async () => {
    platform = await startTestPlatform();
  });
  after(() => platform.stop());
  const get = (path: string, headers: Record<string, string> = {}) => fetch(platform.managementUrl + path, { headers, redirect: 'manual' });

  it('serves an index linking both references and their contracts, /docs leading to it', async () => {
    const moved = await get('/docs');
    assert.deepEqual([moved.status, moved.headers.get('location')], [301, '/docs/']);
    const index = await get('/docs/');
    assert.equal(index.status, 200);
    assert.equal(index.headers.get('content-type'), 'text/html; charset=utf-8');
    const links = references(await index.text());
    for (const path of ['/docs/management', '/docs/data', '/docs/management.openapi.yaml', '/docs/data.openapi.yaml']) assert.ok(links.includes(path), path);
    for (const link of links) assert.ok(link.startsWith('/') && !link.startsWith('//'), `${link} is a path on the origin`);
    assert.deepEqual(offOriginSources(index.headers.get('content-security-policy') ?? ''), []);
  });

  for (const name of ['management', 'data'] as const) {
    it(`renders the ${name} contract with assets of its own origin only`, async () => {
      const page = await get(`/docs/${name}`);
      assert.equal(page.status, 200);
      assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
      const csp = page.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'none'/);
      assert.deepEqual(offOriginSources(csp), [], `the policy allows only the origin: ${csp}`);
      const html = await page.text();
      const refs = references(html);
      assert.ok(refs.length >= 3, refs.join(' '));
      for (const ref of refs) assert.ok(ref.startsWith('/') && !ref.startsWith('//'), `${ref} is a path on the origin`);
      assert.doesNotMatch(html, /https?:\/\/|<script>|\son[a-z]+=/i, 'no absolute URL, no inline script or handler');

      for (const script of [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!)) {
        const asset = await get(script);
        assert.equal(asset.status, 200, script);
        assert.equal(asset.headers.get('content-type'), 'text/javascript; charset=utf-8', script);
        assert.ok((await asset.arrayBuffer()).byteLength > 100, script);
      }
      const spec = /data-spec="([^"]+)"/.exec(html)![1]!;
      const contract = await get(spec);
      assert.equal(contract.status, 200);
      assert.equal(contract.headers.get('content-type'), 'application/yaml; charset=utf-8');
      assert.equal(await contract.text(), await readFile(contractPath(name), 'utf8'));
    });
  }

  it('sends the Redoc bundle compressed when asked, the same bytes once decompressed', async () => {
    const plain = Buffer.from(await (await get('/docs/assets/redoc.standalone.js')).arrayBuffer());
    const gzip = await fetch(platform.managementUrl + '/docs/assets/redoc.standalone.js', { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gzip.headers.get('content-encoding'), 'gzip');
    assert.equal(gzip.headers.get('vary'), 'Accept-Encoding');
    // fetch decodes the answer: what arrives equals the plain bundle, which came in fewer bytes.
    assert.ok(Buffer.from(await gzip.arrayBuffer()).equals(plain));
    const raw = await new Promise<Buffer>((resolve, reject) => {
      httpGet(platform.managementUrl + '/docs/assets/redoc.standalone.js', { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      }).on('error', reject);
    });
    assert.ok(raw.length < plain.length / 2, `${raw.length} bytes compressed of ${plain.length}`);
    assert.ok(gunzipSync(raw).equals(plain));
  });

  it('leaves every other path to the API: an unknown page under /docs/ is a problem, the API answers as before', async () => {
    const unknown = await get('/docs/nothing-here');
    assert.equal(unknown.status, 404);
    assert.match(unknown.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.ok(unknown.headers.get('x-request-id'));
    assert.equal((await get('/livez')).status, 200);
  });
});
