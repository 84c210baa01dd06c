import assert from 'node:assert/strict';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { dataClient } from './support/data-client.ts';
import { KNOWN, buildFixture } from './support/reference-fixture.ts';

const BATCH = '/data/custom/reference/batch/';
const REMOVE = '/data/custom/reference/remove/';

describe('Idempotency-Key on custom-data writes (docs/adr/0010-idempotency-key.md)', function () {
  this.timeout(60_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let client: ReturnType<typeof dataClient>;
  const version = async () => Number((await platform.database.db('data_tenant_versions').where({ tenant_id: tenant.tenantId }).first())?.version ?? 0);
  const stored = async () => (await client.post('/data/custom/reference/query/', {})).body.data;

  before(async () => {
    platform = await startTestPlatform((await buildFixture(KNOWN)).env);
    tenant = await platform.tenant();
    client = dataClient(platform.dataUrl, tenant);
  });
  after(() => platform?.stop());

  it('turns 20 concurrent identical writes with one key into one write and 20 identical answers', async () => {
    const before = await version();
    const body = { data: [{ instrument_id: 'US0378331005', reference_data: { esg_score: 7, note: 'one' } }] };
    const answers = await Promise.all(Array.from({ length: 20 }, () => client.post(BATCH, body, { 'Idempotency-Key': 'same-20' })));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(20).fill(200),
    );
    assert.equal(new Set(answers.map((a) => a.text)).size, 1);
    assert.deepEqual(answers[0]!.body, { data: { upserted: 2 }, meta: null });
    assert.equal(answers.filter((a) => a.headers.get('idempotency-replayed') === null).length, 1);
    assert.equal(await version(), before + 1);
  });

  it('replays a removal without removing again, and refuses the key with another body', async () => {
    await client.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { a: 1, b: 2 } }] });
    const first = await client.post(REMOVE, { instrument_ids: ['US0378331005'], keys: ['a'] }, { 'Idempotency-Key': 'rm-1' });
    assert.deepEqual(first.body, { data: { removed: 1 }, meta: null });
    // Written again after the removal: a replay must not remove it a second time.
    await client.post(BATCH, { data: [{ instrument_id: 'US0378331005', reference_data: { a: 3 } }] });
    const replay = await client.post(REMOVE, { instrument_ids: ['US0378331005'], keys: ['a'] }, { 'Idempotency-Key': 'rm-1' });
    assert.deepEqual([replay.status, replay.headers.get('idempotency-replayed'), replay.text], [200, 'true', first.text]);
    assert.equal((await stored()).US0378331005.a, 3);
    const other = await client.post(REMOVE, { instrument_ids: ['US0378331005'], keys: ['b'] }, { 'Idempotency-Key': 'rm-1' });
    assertProblem(other, 422, 'idempotency_key_reused');
    assert.equal((await stored()).US0378331005.b, 2);
  });
});
