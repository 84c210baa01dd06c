import assert from 'node:assert/strict';
import { configurationPage, documentedSettings, settingsDrift } from '@platform/test-support/settings-table';
import { dataSettings } from '../src/config.ts';

describe('docs/configuration.md and the data service settings', () => {
  it('the table lists every variable the service reads, nothing else, with ★ on exactly its secrets', () => {
    const documented = documentedSettings(configurationPage(), 'data');
    assert.ok(documented.has('DUCKDB_PATH'), 'the table is found and read');
    assert.ok(!documented.has('JWT_PRIVATE_KEY'), "the management service's own rows are not the data service's");
    assert.deepEqual(settingsDrift(dataSettings, documented), []);
  });

  it('reads a row for both services, several names in one cell and ★ after the secret one only', () => {
    const page = [
      '| service | setting | default | meaning |',
      '|---|---|---|---|',
      '| both | `NATS_USER`, `NATS_PASSWORD` ★ | unset | x |',
      '| management | `PORT` | `8080` | x |',
      '| data | `DUCKDB_PATH` | required | x |',
      '',
      '| data | `AFTER_THE_TABLE` | | |',
    ].join('\n');
    assert.deepEqual(
      [...documentedSettings(page, 'data')],
      [
        ['NATS_USER', { secret: false }],
        ['NATS_PASSWORD', { secret: true }],
        ['DUCKDB_PATH', { secret: false }],
      ],
    );
  });
});
