import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, parsers } from '../src/config.ts';

const spec = {
  PORT: { description: 'HTTP port', default: 8080, parse: parsers.integer(0, 65535) },
  DATABASE_URL: { description: 'Postgres URL', required: true, secret: true, parse: parsers.url('postgres') },
  MODE: { description: 'mode', default: 'a', parse: parsers.oneOf('a', 'b') },
} as const;

describe('config', () => {
  it('applies defaults and parses values', () => {
    const config = loadConfig(spec, { DATABASE_URL: 'postgres://h/db', PORT: '9000' });
    assert.deepEqual({ ...config }, { PORT: 9000, DATABASE_URL: 'postgres://h/db', MODE: 'a' });
    assert.ok(Object.isFrozen(config));
  });

  it('reports every problem at once, saying how to fix it', () => {
    assert.throws(
      () => loadConfig(spec, { PORT: 'eighty', MODE: 'c' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.problems.length, 3);
        assert.match(error.message, /PORT: "eighty" is not a whole number/);
        assert.match(error.message, /DATABASE_URL is required: Postgres URL/);
        assert.match(error.message, /MODE: "c" is not one of a, b/);
        return true;
      },
    );
  });

  it('takes IP addresses for listeners, and refuses host names and anything else', () => {
    for (const address of ['127.0.0.1', '0.0.0.0', '::', '::1']) assert.equal(parsers.ipAddress(address), address);
    for (const bad of ['localhost', '', '127.0.0', '0.0.0.0 ', '10.0.0.256']) assert.throws(() => parsers.ipAddress(bad), /is not an IP address/);
  });

  it('reads secrets from <NAME>_FILE', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cfg-')), 'url');
    writeFileSync(file, 'postgres://from-file/db\n');
    assert.equal(loadConfig(spec, { DATABASE_URL_FILE: file }).DATABASE_URL, 'postgres://from-file/db');
    assert.throws(() => loadConfig(spec, { DATABASE_URL_FILE: `${file}.missing` }), /cannot be read/);
  });

  it('never echoes credentials of a bad URL', () => {
    assert.throws(
      () => loadConfig(spec, { DATABASE_URL: 'mysql://user:secret@h/db' }),
      (e: Error) => !e.message.includes('secret'),
    );
  });
});
