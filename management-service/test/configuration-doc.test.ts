import assert from 'node:assert/strict';
import { configurationPage, documentedSettings, settingsDrift } from '@platform/test-support/settings-table';
import { managementSettings } from '../src/config.ts';

describe('docs/configuration.md and the management service settings', () => {
  it('the table lists every variable the service reads, nothing else, with ★ on exactly its secrets', () => {
    const documented = documentedSettings(configurationPage(), 'management');
    assert.ok(documented.has('JWT_PRIVATE_KEY'), 'the table is found and read');
    assert.deepEqual(settingsDrift(managementSettings, documented), []);
  });

  it('names a variable the service reads but the table leaves out, one it lists but nobody reads, and a wrong ★', () => {
    const documented = new Map([
      ['PORT', { secret: false }],
      ['JWT_PRIVATE_KEY', { secret: false }],
      ['GONE', { secret: false }],
    ]);
    const settings = { PORT: { description: 'port' }, JWT_PRIVATE_KEY: { description: 'key', secret: true }, NEW_ONE: { description: 'new' } };
    assert.deepEqual(settingsDrift(settings, documented), [
      'JWT_PRIVATE_KEY is a secret but not marked ★',
      'NEW_ONE is read by the service but not in the table',
      'GONE is in the table but the service does not read it',
    ]);
  });
});
