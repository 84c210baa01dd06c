import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importPKCS8 } from 'jose';
import { newSigningKey, signingKeyFile } from '@platform/dev-stack/signing-key';

describe('dev stack: signing keys', () => {
  it('makes a new ES256 key each time', async () => {
    const [a, b] = [await newSigningKey(), await newSigningKey()];
    assert.notEqual(a, b);
    await importPKCS8(a, 'ES256');
  });

  it('keeps a key in a file readable by its owner only, and reads the same key again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signing-key-'));
    try {
      const file = join(dir, 'key.pem');
      const first = await signingKeyFile(file);
      await importPKCS8(first, 'ES256');
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(await signingKeyFile(file), first, 'a restart keeps the tokens it signed valid');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
