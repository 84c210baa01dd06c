import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@platform/shared';
import { createTokenSigner } from '../src/auth/tokens.ts';
import { loadManagementConfig } from '../src/config.ts';

const base = { DATABASE_URL: 'postgres://h/db', NATS_URL: 'nats://127.0.0.1:4222' };

const pkcs8 = (type: 'ec' | 'rsa', curve?: string) =>
  (type === 'ec' ? generateKeyPairSync('ec', { namedCurve: curve! }) : generateKeyPairSync('rsa', { modulusLength: 2048 })).privateKey.export({
    format: 'pem',
    type: 'pkcs8',
  }) as string;

/** The one problem the config check reports for JWT_PRIVATE_KEY = `key`. */
function refusal(env: NodeJS.ProcessEnv): string {
  try {
    loadManagementConfig({ ...base, ...env });
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    assert.equal(error.problems.length, 1, error.message);
    return error.problems[0]!;
  }
  assert.fail('the key was accepted');
}

describe('management config: JWT_PRIVATE_KEY', () => {
  const key = pkcs8('ec', 'prime256v1');
  const keyBody = key.split('\n')[1]!;

  it('accepts an ES256 PKCS#8 PEM, also on one line with \\n and with CRLF, and gives the token signer a key it signs with', async () => {
    for (const form of [key, key.trim(), key.replace(/\n/g, '\\n'), key.replace(/\n/g, '\r\n'), `\n${key}\n\n`]) {
      const config = loadManagementConfig({ ...base, JWT_PRIVATE_KEY: form });
      assert.equal(config.JWT_PRIVATE_KEY, key);
    }
    const signer = await createTokenSigner(loadManagementConfig({ ...base, JWT_PRIVATE_KEY: key }).JWT_PRIVATE_KEY, 'test', 300);
    assert.equal(signer.jwks.keys[0]?.crv, 'P-256');
  });

  it("refuses a key with npm's banner before it (`npm run cli -- signing-key > key.pem`), saying how to make one, without echoing the key", () => {
    const banner = `\n> investment-platform@1.0.0 cli\n> tsx cli/src/main.ts signing-key\n\n${key}`;
    const problem = refusal({ JWT_PRIVATE_KEY: banner });
    assert.match(
      problem,
      /^JWT_PRIVATE_KEY: is not a PEM PKCS#8 EC P-256 private key \(text before its -----BEGIN line, such as npm's banner\): create one with `npm run -s cli -- signing-key --out key\.pem`/,
    );
    assert.ok(!problem.includes(keyBody), 'the key is not echoed');
  });

  it('refuses the banner in a file named by JWT_PRIVATE_KEY_FILE', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'jwt-key-')), 'key.pem');
    writeFileSync(file, `\n> cli\n> tsx cli/src/main.ts signing-key\n\n${key}`);
    assert.match(refusal({ JWT_PRIVATE_KEY_FILE: file }), /JWT_PRIVATE_KEY: is not a PEM PKCS#8 EC P-256 private key \(text before/);
  });

  it('refuses text that is no PEM, a SEC1 EC key, a PKCS#8 key of another kind or curve, and a damaged body, naming what it is', () => {
    const sec1 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ format: 'pem', type: 'sec1' }) as string;
    const cases: Array<[string, RegExp]> = [
      ['REPLACE ME (dev placeholder, not a key)', /\(no -----BEGIN PRIVATE KEY----- line\)/],
      [sec1, /\(a PEM "EC PRIVATE KEY", not "PRIVATE KEY"\)/],
      [pkcs8('rsa'), /\(a rsa key\)/],
      [pkcs8('ec', 'secp384r1'), /\(a ec secp384r1 key\)/],
      [key.replace(keyBody, keyBody.slice(0, 20)), /\(its content does not decode as PKCS#8\)/],
      [`${key}trailing words`, /\(not one PEM block of base64 between/],
    ];
    for (const [value, why] of cases) {
      const problem = refusal({ JWT_PRIVATE_KEY: value });
      assert.match(problem, /^JWT_PRIVATE_KEY: is not a PEM PKCS#8 EC P-256 private key /);
      assert.match(problem, why);
      assert.match(problem, /create one with `npm run -s cli -- signing-key --out key\.pem`/);
    }
  });
});
