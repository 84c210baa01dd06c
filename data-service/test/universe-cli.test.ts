import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testWorkDir } from '@platform/test-support/database';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { dataClient } from './support/data-client.ts';
import { KNOWN, buildFixture } from './support/reference-fixture.ts';

describe('CLI: data universe set | remove | list', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let dir: string;
  const cli = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'cli/src/main.ts', 'data', 'universe', ...args], {
      env: { ...process.env, DATABASE_URL: platform.database.url },
    });
    return JSON.parse(stdout);
  };
  const refused = (pattern: RegExp) => (e: { code: number; stderr: string }) => e.code === 1 && pattern.test(e.stderr);
  const file = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };
  const members = async (name: string) => {
    const res = await dataClient(platform.dataUrl, tenant).get(`/data/reference/universe/?universe_name=${name}&fields=NAME`);
    return res.status === 200 ? Object.keys(res.body.data) : res.status;
  };

  before(async () => {
    platform = await startTestPlatform((await buildFixture(KNOWN)).env);
    tenant = await platform.tenant();
    dir = await mkdtemp(join(testWorkDir(), 'universe-cli-'));
  });
  after(() => platform?.stop());

  it('sets a universe from one ISIN per line, replaces it from a CSV with an ISIN column, and removes it', async () => {
    const set = await cli('set', tenant.tenantId, 'HOUSE', await file('lines.txt', 'US0378331005\n\nDE0005140008\nUS0378331005\n'));
    assert.deepEqual({ ...set, version: typeof set.version }, { tenant: tenant.tenantId, universe: 'HOUSE', members: 2, version: 'number' });
    assert.deepEqual(await members('HOUSE'), ['DE0005140008', 'US0378331005']);

    await cli('set', tenant.tenantId, 'HOUSE', await file('members.csv', 'Name,isin\n"Apple, Inc.",US0378331005\nWorld,IE00B4L5Y983\n'));
    assert.deepEqual(await members('HOUSE'), ['IE00B4L5Y983', 'US0378331005']);
    assert.deepEqual(await cli('list', tenant.tenantId), [{ universe: 'HOUSE', members: 2 }]);

    assert.equal((await cli('remove', tenant.tenantId, 'HOUSE')).removed, 2);
    assert.equal(await members('HOUSE'), 404);
    assert.deepEqual(await cli('remove', tenant.tenantId, 'HOUSE'), { tenant: tenant.tenantId, universe: 'HOUSE', removed: 0 });
  });

  it('writes nothing when an ISIN is bad, and refuses a bad name or an unknown tenant', async () => {
    const bad = await file('bad.txt', 'US0378331005\nUS0378331006\nnot-an-isin\n');
    await assert.rejects(cli('set', tenant.tenantId, 'BAD', bad), refused(/2 bad ISIN.*\n.*line 2: ISIN US0378331006 has check digit 6, expected 5\nline 3/));
    assert.equal(await members('BAD'), 404);
    await assert.rejects(cli('set', tenant.tenantId, 'BAD', await file('wide.csv', 'a,b\n1,2\n')), refused(/ISIN column/));
    await assert.rejects(cli('set', tenant.tenantId, 'not valid', await file('ok.txt', 'US0378331005\n')), refused(/universe name/));
    await assert.rejects(cli('set', 'no-such-tenant', 'HOUSE', await file('ok.txt', 'US0378331005\n')), refused(/No such tenant/));
  });
});
