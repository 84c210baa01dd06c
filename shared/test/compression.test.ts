import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { decompress } from '@platform/test-support/raw-http';
import { COMPRESSION_MIN_BYTES, availableCodings, chooseCoding, compressResponse, type ContentCoding } from '../src/http/compression.ts';

describe('response compression: the coding a client accepts', () => {
  const offered: ContentCoding[] = ['zstd', 'br', 'gzip'];
  const choose = (header: string | undefined) => chooseCoding(header, offered);

  it('offers zstd, br and gzip, in that order, on every supported Node.js', () => {
    assert.deepEqual(availableCodings, ['zstd', 'br', 'gzip']);
    assert.equal(chooseCoding('zstd'), 'zstd');
  });

  it('offers br and gzip where node:zlib has no zstd (Node.js before 22.15), and answers a zstd-only client as it is', function () {
    this.timeout(30_000);
    const withoutZstd = 'data:text/javascript,import zlib from "node:zlib"; delete zlib.zstdCompress;';
    const probe = `const c = await import('./src/http/compression.ts');
      console.log(JSON.stringify([c.availableCodings, c.chooseCoding('zstd') ?? null, c.chooseCoding('zstd, gzip')]));`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--import', withoutZstd, '--input-type=module', '-e', probe], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), [['br', 'gzip'], null, 'gzip']);
  });

  it('compresses nothing when the client does not ask, or asks only for what is not offered', () => {
    assert.equal(choose(undefined), undefined);
    assert.equal(choose(''), undefined);
    assert.equal(choose('identity'), undefined);
    assert.equal(choose('deflate, compress'), undefined);
    assert.equal(chooseCoding('zstd', ['br', 'gzip']), undefined);
  });

  it('honours q-values: the heaviest offered coding, the server order among equals, q=0 refuses', () => {
    assert.equal(choose('gzip'), 'gzip');
    assert.equal(choose('gzip, br'), 'br');
    assert.equal(choose('gzip, br, zstd'), 'zstd');
    assert.equal(choose('gzip;q=1, br;q=0.5'), 'gzip');
    assert.equal(choose('br;q=0.2, gzip;q=0.8, zstd;q=0.5'), 'gzip');
    assert.equal(choose('br;q=0, gzip;q=0'), undefined);
    assert.equal(choose('*'), 'zstd');
    assert.equal(choose('*;q=0.5, br;q=0.9'), 'br');
    assert.equal(choose('*;q=0, gzip'), 'gzip');
    assert.equal(choose('*, zstd;q=0, br;q=0'), 'gzip');
    assert.equal(choose('GZip;Q=1'), 'gzip');
    assert.equal(choose('x-gzip'), 'gzip');
  });

  it('sends the body as it is when identity weighs more than every offered coding', () => {
    assert.equal(choose('identity, gzip;q=0.5'), undefined);
    assert.equal(choose('gzip;q=0.5, identity;q=0.1'), 'gzip');
    assert.equal(choose('identity;q=0, gzip'), 'gzip');
  });

  it('ignores what does not parse and still answers', () => {
    assert.equal(choose('gzip;q=abc, br'), 'br', 'a part with a bad q-value is left out');
    assert.equal(choose('gzip;q=2'), undefined);
    assert.equal(choose('gzip;q=-1, br;q=.5'), undefined);
    assert.equal(choose(';;;, ,, =, "br"'), undefined);
    assert.equal(choose('gzip;level=9'), 'gzip', 'parameters other than q do not matter');
    assert.equal(choose('\u00e9\u00e9, gzip'), 'gzip');
  });
});

describe('response compression: bodies', () => {
  const json = Buffer.from(JSON.stringify({ data: Array.from({ length: 500 }, (_, i) => ({ id: i, name: `Société ${i} — déjà vu 🚀` })) }));

  for (const coding of ['zstd', 'br', 'gzip'] as const) {
    it(`round-trips a large body through ${coding}`, async () => {
      const sent = await compressResponse(coding, json, 'application/json; charset=utf-8', false);
      assert.equal(sent.coding, coding);
      assert.equal(sent.vary, true);
      assert.ok(sent.body.length < json.length / 3, `${coding}: ${sent.body.length} of ${json.length} bytes`);
      assert.deepEqual(decompress(coding, sent.body), json);
    });
  }

  it('leaves small, already encoded and already compressed bodies as they are', async () => {
    const small = json.subarray(0, COMPRESSION_MIN_BYTES - 1);
    assert.deepEqual(await compressResponse('gzip', small, 'application/json', false), { body: small, vary: false });
    assert.deepEqual(await compressResponse('gzip', json, 'application/json', true), { body: json, vary: false });
    assert.deepEqual(await compressResponse('gzip', json, 'image/png', false), { body: json, vary: false });
    assert.deepEqual(await compressResponse('gzip', json, 'application/zip', false), { body: json, vary: false });
    assert.equal((await compressResponse('gzip', json, 'image/svg+xml', false)).coding, 'gzip', 'SVG is text');
    assert.equal((await compressResponse('gzip', json, 'application/vnd.apache.arrow.stream', false)).coding, 'gzip');
  });

  it('sends a large body as it is, varying by Accept-Encoding, to a client that does not ask', async () => {
    assert.deepEqual(await compressResponse(undefined, json, 'application/json', false), { body: json, vary: true });
    assert.deepEqual(await compressResponse('br;q=oops', json, 'application/json', false), { body: json, vary: true });
  });
});
