import assert from 'node:assert/strict';
import { loadContract } from '@platform/shared';
import { assertProblem } from '@platform/test-support/http';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { entityTypes, questionnaire, type Ids } from './customer-rights-cases.ts';

/**
 * Every field of every entity type's PATCH × {machine client, owner, another customer}: allowed or
 * refused, and a refused write changes nothing. The table (customer-rights-cases.ts) must name every
 * field the contract lets a PATCH send (checked below), so a new field cannot slip in unclassified.
 */

/** `{a: {b: v}}` for the path `a.b`. */
function patchOf(field: string, value: unknown): Record<string, unknown> {
  return field.split('.').reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

function at(doc: any, field: string): unknown {
  return field.split('.').reduce((v, k) => v?.[k], doc);
}

/** The entity as the machine client reads it, without what a read adds on its own. */
async function snapshot(api: Api, path: string): Promise<unknown> {
  const res = await api('GET', path);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** Property paths a PATCH body may carry, as deep as the schema names its properties. */
function schemaFields(schema: any, prefix = ''): string[] {
  const props = schema?.properties ?? {};
  return Object.entries(props).flatMap(([key, sub]: [string, any]) =>
    sub.properties && !sub.additionalProperties ? schemaFields(sub, `${prefix}${key}.`) : [`${prefix}${key}`],
  );
}

describe("a customer's token changes only what is the customer's", function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let machine: Api;
  let asOwner: Api;
  let asOther: Api;
  let ids: Ids;

  before(async () => {
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    machine = await machineApi(platform, tenant);
    const id = async (path: string, body: unknown) => {
      const res = await machine('POST', path, body);
      assert.equal(res.status, 201, res.text);
      return res.body.id as string;
    };
    const owner = await id('/users/', build.user());
    const other = await id('/users/', build.user({ first_name: 'Eve' }));
    const policy = await id('/policies/', build.policy());
    const questionnaireId = await id('/suitability-profiler/questionnaires/', questionnaire());
    ids = {
      owner,
      other,
      policy,
      policy2: await id('/policies/', build.policy({ name: 'Bold' })),
      goal: await id('/goals/', { name: 'House' }),
      horizon: await id('/horizons/', { name: 'Long', years: 10 }),
      risk: await id('/risk-profiles/', { name: 'Moderate', score: 3, risk_level: 3 }),
      questionnaire: questionnaireId,
      questionnaire2: await id('/suitability-profiler/questionnaires/', questionnaire('other')),
      profile: await id('/suitability-profiler/profiles/', { user_id: owner, questionnaire_id: questionnaireId }),
      portfolio: await id('/portfolios/', build.roboPortfolio(owner, { policy_id: policy })),
    };
    asOwner = await userApi(platform, machine, owner);
    asOther = await userApi(platform, machine, other);
  });
  after(() => platform.stop());

  it('classifies every field a PATCH of the contract may send', async () => {
    const schemas = (await loadContract('management')).components!.schemas as Record<string, unknown>;
    for (const type of entityTypes) {
      const listed = type
        .cases(ids)
        .map((c) => c.field)
        .sort();
      assert.deepEqual(listed, schemaFields(schemas[type.patchSchema]).sort(), `${type.name}: every field of ${type.patchSchema}`);
    }
  });

  for (const type of entityTypes) {
    it(`${type.name}: every field × {machine client, owner, other customer}`, async () => {
      for (const c of type.cases(ids)) {
        const label = `${type.name} ${c.field}`;
        const path = await type.create(machine, ids, c.create ?? {});
        const before = await snapshot(machine, path);
        const body = patchOf(c.field, c.value);

        // Another customer: neither reads nor changes it.
        assertProblem(await asOther('PATCH', path, body), 403, 'forbidden');
        assert.deepEqual(await snapshot(machine, path), before, `${label}: unchanged after another customer's PATCH`);

        const owner = type.selfOwned ? await userApi(platform, machine, path.split('/').pop()!) : asOwner;
        const owned = await owner('PATCH', path, body);
        if (c.owner === 'allowed') {
          assert.equal(owned.status, 200, `${label}: the owner may change it: ${owned.text}`);
          assert.deepEqual(at(owned.body, c.field), c.value, `${label}: changed by the owner`);
        } else {
          assertProblem(owned, 403, 'forbidden');
          if (c.owner === 'refused')
            assert.deepEqual(
              owned.body.errors?.map((e: { loc: unknown }) => e.loc),
              [['body', ...c.field.split('.')]],
              `${label}: the field is named`,
            );
          assert.deepEqual(await snapshot(machine, path), before, `${label}: unchanged after the owner's refused PATCH`);
        }

        const fresh = await type.create(machine, ids, c.create ?? {});
        const byMachine = await machine('PATCH', fresh, body);
        assert.equal(byMachine.status, c.machine ?? 200, `${label}: the machine client: ${byMachine.text}`);
      }
    });
  }

  it("deletes are the machine client's: the owner's DELETE of its user, portfolio, transaction or profile is refused and changes nothing", async () => {
    for (const type of entityTypes) {
      const path = await type.create(machine, ids, {});
      const before = await snapshot(machine, path);
      const owner = type.selfOwned ? await userApi(platform, machine, path.split('/').pop()!) : asOwner;
      assertProblem(await owner('DELETE', path), 403, 'forbidden');
      assertProblem(await asOther('DELETE', path), 403, 'forbidden');
      assert.deepEqual(await snapshot(machine, path), before, `${type.name}: unchanged`);
      const deleted = await machine('DELETE', path);
      assert.equal(deleted.status, 200, `${type.name}: ${deleted.text}`);
      assert.equal(deleted.body.deleted, true);
    }
  });

  it('holdings replaced whole are refused even when the patch only drops a position', async () => {
    const path = await entityTypes[1]!.create(machine, ids, { portfolio: { $EUR: 100, IE00B4L5Y983: 2 } });
    const before = await snapshot(machine, path);
    const res = await asOwner('PATCH', path, { portfolio: { $EUR: 100 } });
    assertProblem(res, 403, 'forbidden');
    assert.deepEqual(
      res.body.errors.map((e: { loc: unknown }) => e.loc),
      [['body', 'portfolio']],
    );
    assert.deepEqual(await snapshot(machine, path), before);
  });

  it('names every refused field of a mixed patch, and applies none of it', async () => {
    const path = await entityTypes[1]!.create(machine, ids, {});
    const before = await snapshot(machine, path);
    const res = await asOwner('PATCH', path, {
      name: 'Mine',
      funded_since: '2026-01-01T00:00:00.000Z',
      config: { manager_settings: { tags: ['x'], active: false } },
    });
    assertProblem(res, 403, 'forbidden');
    assert.deepEqual(res.body.errors.map((e: { loc: string[] }) => e.loc.join('.')).sort(), ['body.config.manager_settings.active', 'body.funded_since']);
    assert.deepEqual(await snapshot(machine, path), before);
  });

  it("sending back unchanged values of fields that are not the customer's is no change, and allowed", async () => {
    const path = await entityTypes[1]!.create(machine, ids, {});
    const current = (await snapshot(machine, path)) as any;
    const res = await asOwner('PATCH', path, {
      name: 'Mine',
      portfolio: current.portfolio,
      funded_since: null,
      config: { manager_settings: { policy_id: current.config.manager_settings.policy_id } },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'Mine');
  });

  it("another customer's transaction list is refused as the portfolio is; the owner gets it", async () => {
    const booked = await machine('POST', `/portfolios/${ids.portfolio}/transactions/`, build.transaction());
    assert.equal(booked.status, 201, booked.text);
    assertProblem(await asOther('GET', `/portfolios/${ids.portfolio}`), 403, 'forbidden');
    assertProblem(await asOther('GET', `/portfolios/${ids.portfolio}/transactions/`), 403, 'forbidden');
    const own = await asOwner('GET', `/portfolios/${ids.portfolio}/transactions/`);
    assert.equal(own.status, 200, own.text);
    assert.ok(
      own.body.results.some((t: { id: string }) => t.id === booked.body.id),
      'the owner sees the booked transaction',
    );
    assert.equal(own.body.count, (await machine('GET', `/portfolios/${ids.portfolio}/transactions/`)).body.count);
  });

  it("a customer's GET /events/ is refused: the feed is the integration's", async () => {
    assertProblem(await asOwner('GET', '/events/'), 403, 'forbidden');
    assert.equal((await machine('GET', '/events/')).status, 200);
  });

  it('a customer creates nothing and reports no funding', async () => {
    const portfoliosBefore = (await machine('GET', '/portfolios/')).body.count;
    const transactionsBefore = (await machine('GET', `/portfolios/${ids.portfolio}/transactions/`)).body.count;
    assertProblem(await asOwner('POST', '/portfolios/', build.portfolio(ids.owner)), 403, 'forbidden');
    assertProblem(await asOwner('POST', `/portfolios/${ids.portfolio}/transactions/`, build.transaction()), 403, 'forbidden');
    assertProblem(
      await asOwner('POST', '/events/deposit/', { data: { amount: '1', currency: 'EUR', portfolio: ids.portfolio, external_id: 'x-1' } }),
      403,
      'forbidden',
    );
    assertProblem(
      await asOwner('POST', '/events/withdraw/', { data: { amount: '1', currency: 'EUR', portfolio: ids.portfolio, external_id: 'x-2' } }),
      403,
      'forbidden',
    );
    assert.equal((await machine('GET', '/portfolios/')).body.count, portfoliosBefore);
    assert.equal((await machine('GET', `/portfolios/${ids.portfolio}/transactions/`)).body.count, transactionsBefore);
  });
});
