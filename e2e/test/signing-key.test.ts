import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadManagementConfig } from '@platform/management-service/config';

const cli = (...args: string[]) => promisify(execFile)(process.execPath, ['--import', 'tsx', 'cli/src/main.ts', ...args]);
const config = (key: string) => loadManagementConfig({ DATABASE_URL: 'postgres://h/db', NATS_URL: 'nats://127.0.0.1:4222', JWT_PRIVATE_KEY: key });

describe('CLI signing-key', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'signing-key-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('--out writes a key the management service accepts, readable by its owner only, also over an existing file', async () => {
    const file = join(dir, 'key.pem');
    writeFileSync(file, 'REPLACE ME (placeholder)', { mode: 0o644 });
    const { stdout } = await cli('signing-key', '--out', file);
    assert.equal(stdout, '', 'the key is not printed');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const key = readFileSync(file, 'utf8');
    assert.equal(config(key).JWT_PRIVATE_KEY, key);
    await cli('signing-key', '--out', file);
    assert.notEqual(readFileSync(file, 'utf8'), key, 'a new key each time');
  });

  it('prints a key the management service accepts, and nothing else', async () => {
    const { stdout } = await cli('signing-key');
    assert.match(stdout, /^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n$/);
    assert.equal(config(stdout).JWT_PRIVATE_KEY, stdout);
  });
});
