import fc from 'fast-check';
import { loadContract } from '@platform/shared';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { answerProblem, errorCodes } from '@platform/test-support/fuzz/checks';
import { operationsOf } from '@platform/test-support/fuzz/operations';
import { queryExpression, requestsFor } from '@platform/test-support/fuzz/requests';
import { fuzzOperation, fuzzRuns, fuzzSeed } from '@platform/test-support/fuzz/runner';
import type { KnownIds } from '@platform/test-support/fuzz/schema-values';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

const contract = await loadContract('management');
const codes = errorCodes(contract);
// Deletes last, so that the other operations find the fixtures as they were made.
const operations = operationsOf(contract).sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));

/** Paths the collection queries name, known and unknown, of every type. */
const QUERY_PATHS = [
  'id',
  'external_id',
  'creation_datetime',
  'version',
  'deleted',
  'readable_by',
  'name',
  'first_name',
  'status',
  'funded_since',
  'owned_by_user_id',
  'base_currency',
  'config',
  'config.manager_settings.divest_amount',
  'config.manager_settings.tags',
  'quantity',
  'years',
  'no_such_field',
];

describe('management interface fuzz: hostile requests to every operation of the contract', function () {
  let platform: TestPlatform;
  let api: Api & { token: string };
  const ids: KnownIds = {};
  const pathValues: Record<string, string[]> = {};

  before(async function () {
    this.timeout(120_000);
    platform = await startTestPlatform();
    const tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
    const create = async (path: string, body: unknown, param: string) => {
      const res = await api('POST', path, body);
      if (res.status !== 201) throw new Error(`fixture ${path}: ${res.status} ${res.text}`);
      const id = res.body.id as string;
      (ids[id[0]!] ??= []).push(id);
      pathValues[param] = [id, `${id[0]}01HZ6HGTC3K9582APC9AFTCDHF`];
      return id;
    };
    const user = await create('/users/', build.user(), 'user_id');
    const portfolio = await create('/portfolios/', build.portfolio(user), 'portfolio_id');
    await create(`/portfolios/${portfolio}/transactions/`, build.transaction(), 'transaction_id');
    await create('/goals/', { name: 'Retirement', target_amount: '250000.00' }, 'goal_id');
    await create('/horizons/', { name: 'Ten years', years: 10 }, 'horizon_id');
    await create('/policies/', build.policy(), 'policy_id');
    await create('/risk-profiles/', { name: 'Balanced', score: 50, risk_level: 4 }, 'risk_profile_id');
    await create('/instrument_groups/', { name: { 'en-GB': 'Clean energy' }, instrument_ids: ['IE00B4L5Y983'] }, 'instrument_group_id');
    const questionnaire = await create(
      '/suitability-profiler/questionnaires/',
      { name: 'q', questions: [{ id: 'q1', text: { en: 'q' }, type: 'BOOLEAN' }] },
      'questionnaire_id',
    );
    await create('/suitability-profiler/profiles/', { user_id: user, questionnaire_id: questionnaire, portfolio_id: portfolio }, 'profile_id');
  });
  after(() => platform?.stop());

  for (const op of operations) {
    it(`${op.operationId}: ${op.method} ${op.path} answers no 5xx and only problems of the contract`, async function () {
      this.timeout(120_000);
      const requests = requestsFor(op, {
        ids,
        pathValues,
        headers: { authorization: `Bearer ${api.token}` },
        queryValues: {
          query: fc.oneof(fc.constantFrom('', "name eq 'x'", 'version ge 1 orderby creation_datetime desc'), queryExpression(QUERY_PATHS)),
          embed: fc.oneof(
            { weight: 2, arbitrary: fc.constant(undefined) },
            {
              weight: 1,
              arbitrary: fc.constantFrom(
                'owned_by_user_id',
                'owned_by_user_id,config.manager_settings.policy_id',
                'user_id,portfolio_id',
                'nope',
                'owned_by_user_id,,',
              ),
            },
          ),
        },
      });
      await fuzzOperation({
        base: platform.managementUrl,
        op,
        requests,
        seed: fuzzSeed(),
        runs: fuzzRuns(12),
        check: (request, answer) => {
          // The identity provider is not managed by this deployment: creating a user there is not built.
          const notBuilt = op.operationId === 'createUser' && request.query.create_idp_user === 'true';
          return answerProblem(answer, codes, notBuilt);
        },
      });
    });
  }
});
