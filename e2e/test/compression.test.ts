import assert from 'node:assert/strict';
import { tableFromIPC } from 'apache-arrow';
import { call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { decompress, rawRequest, type RawAnswer } from '@platform/test-support/raw-http';

const ARROW = 'application/vnd.apache.arrow.stream';
const CODINGS = ['zstd', 'br', 'gzip'] as const;

/** The body a client reads from an answer: decoded as its Content-Encoding says. */
const bodyOf = (answer: RawAnswer): Buffer => {
  const coding = answer.headers['content-encoding'] as string | undefined;
  return coding ? decompress(coding, answer.bytes) : answer.bytes;
};

describe('large answers of both services, compressed when the client asks', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  /** Each large answer: where, how to ask, and what it is without a coding. */
  const answers: { name: string; url: string; headers: Record<string, string>; plain: Buffer }[] = [];

  before(async () => {
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    const login = await call(`${platform.managementUrl}/auth/login/`, { body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret } });
    assert.equal(login.status, 200, login.text);
    const data = { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey };
    const universe = `${platform.dataUrl}/data/reference/universe/?universe_name=GLOBAL&fields=NAME&fields=CURRENCY&fields=PRICE&fields=PRICE_DATE`;
    for (const [name, url, headers] of [
      ['data, JSON', universe, { ...data, accept: 'application/json' }],
      ['data, Arrow', universe, { ...data, accept: ARROW }],
      ['management, JSON', `${platform.managementUrl}/suitability-profiler/questionnaires/`, { authorization: `Bearer ${login.body.access_token}` }],
    ] as const) {
      const plain = await rawRequest(url, { headers });
      assert.equal(plain.status, 200, `${name}: ${plain.bytes.toString().slice(0, 300)}`);
      assert.equal(plain.headers['content-encoding'], undefined, `${name}: nothing asked, nothing encoded`);
      assert.match(String(plain.headers.vary), /accept-encoding/i, `${name}: caches learn that the answer depends on Accept-Encoding`);
      assert.ok(plain.bytes.length > 4096, `${name} is large: ${plain.bytes.length} bytes`);
      answers.push({ name, url, headers, plain: plain.bytes });
    }
  });
  after(() => platform?.stop());

  for (const coding of CODINGS) {
    it(`answers ${coding} to a client that asks for it, decoding to the same bytes`, async () => {
      for (const { name, url, headers, plain } of answers) {
        const answer = await rawRequest(url, { headers: { ...headers, 'accept-encoding': coding } });
        assert.equal(answer.status, 200, name);
        assert.equal(answer.headers['content-encoding'], coding, name);
        assert.match(String(answer.headers.vary), /accept-encoding/i, name);
        assert.ok(answer.bytes.length < plain.length, `${name}: ${answer.bytes.length} of ${plain.length} bytes`);
        assert.equal(Number(answer.headers['content-length']), answer.bytes.length, name);
        assert.deepEqual(decompress(coding, answer.bytes), plain, name);
      }
    });
  }

  it('picks by q-value, and answers a client that asks for nothing offered as it is', async () => {
    const { url, headers, plain } = answers[1]!;
    const weighed = await rawRequest(url, { headers: { ...headers, 'accept-encoding': 'br;q=0.4, gzip;q=0.9, zstd;q=0.1' } });
    assert.equal(weighed.headers['content-encoding'], 'gzip');
    assert.equal(tableFromIPC(bodyOf(weighed)).numRows, tableFromIPC(plain).numRows);
    for (const refused of ['identity', 'deflate', 'gzip;q=0, br;q=0, zstd;q=0']) {
      const answer = await rawRequest(url, { headers: { ...headers, 'accept-encoding': refused } });
      assert.equal(answer.headers['content-encoding'], undefined, refused);
      assert.deepEqual(answer.bytes, plain, refused);
    }
  });

  it('still answers a malformed Accept-Encoding', async () => {
    for (const header of ['gzip;q=bogus, ;;, br;q=9', '"', ',,,', 'q=0.5', '*;q=']) {
      for (const { name, url, headers, plain } of answers) {
        const answer = await rawRequest(url, { headers: { ...headers, 'accept-encoding': header } });
        assert.equal(answer.status, 200, `${name}, ${header}`);
        assert.deepEqual(bodyOf(answer), plain, `${name}, ${header}`);
      }
    }
  });

  it('leaves small answers as they are', async () => {
    for (const url of [`${platform.dataUrl}/livez`, `${platform.managementUrl}/livez`, `${platform.dataUrl}/no-such-route`]) {
      const answer = await rawRequest(url, { headers: { 'accept-encoding': 'gzip, br, zstd' } });
      assert.equal(answer.headers['content-encoding'], undefined, url);
      assert.ok(JSON.parse(answer.bytes.toString()), url);
    }
  });
});
