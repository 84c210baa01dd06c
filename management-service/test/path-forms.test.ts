import assert from 'node:assert/strict';
import { loadContract } from '@platform/shared';
import { call } from '@platform/test-support/http';
import { machineApi } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

const METHODS = ['get', 'post', 'patch', 'delete'] as const;
/** A well-formed id of no entity: the type letter of the parameter's pattern and a fixed ULID. */
const UNKNOWN_ULID = '01M80KHFCGRHVVWPCXR0XBGW3X';

/**
 * The contract lists each path in one form and says the other (trailing slash added or removed) is
 * served as the same operation (contracts/README.md): every operation, in both forms, reaches the
 * same handler and answers alike.
 */
describe('each path of the management contract in both forms', () => {
  let platform: TestPlatform;
  before(async () => {
    platform = await startTestPlatform();
  });
  after(() => platform.stop());

  it('answers every operation alike with and without the trailing slash, never as an unknown route', async () => {
    const contract = await loadContract('management');
    const api = await machineApi(platform, await platform.tenant());
    let checked = 0;
    for (const [template, item] of Object.entries(contract.paths ?? {})) {
      const parameters = (item as { parameters?: { name: string; in: string; schema?: { pattern?: string } }[] }).parameters ?? [];
      const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => {
        const letter = /^\^([A-Z])/.exec(parameters.find((p) => p.name === name)?.schema?.pattern ?? '')?.[1] ?? 'Q';
        return `${letter}${UNKNOWN_ULID}`;
      });
      const other = path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
      for (const method of METHODS) {
        if (!(item as Record<string, unknown>)[method]) continue;
        // One answer per form; an empty object as the body of writes, so both fail or succeed alike.
        const send = (p: string) =>
          call(platform.managementUrl + p, {
            method: method.toUpperCase(),
            token: api.token,
            ...(method === 'post' || method === 'patch' ? { body: {} } : {}),
          });
        const [listed, toggled] = [await send(path), await send(other)];
        const label = `${method.toUpperCase()} ${template}`;
        assert.notEqual(toggled.body?.detail, 'No such route.', `${label}: ${other} is no route`);
        assert.equal(toggled.status, listed.status, `${label}: ${other} answered ${toggled.text.slice(0, 300)}, ${path} ${listed.text.slice(0, 300)}`);
        assert.equal(toggled.body?.code, listed.body?.code, label);
        checked++;
      }
    }
    assert.ok(checked > 50, `${checked} operations`);
  });
});
