import fc from 'fast-check';
import { loadContract } from '@platform/shared';
import { answerProblem, errorCodes } from '@platform/test-support/fuzz/checks';
import { operationsOf } from '@platform/test-support/fuzz/operations';
import { requestsFor } from '@platform/test-support/fuzz/requests';
import { fuzzOperation, fuzzRuns, fuzzSeed } from '@platform/test-support/fuzz/runner';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';

const contract = await loadContract('data');
const codes = errorCodes(contract);
// Deletes last, so that the other operations find the definitions as they were made.
const operations = operationsOf(contract).sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));

describe('data interface fuzz: hostile requests to every operation of the contract', function () {
  let platform: TestPlatform;
  let headers: Record<string, string>;

  before(async function () {
    this.timeout(120_000);
    // Simulations of the contract's example size, so that a valid one costs milliseconds, not seconds.
    platform = await startTestPlatform({ SIMULATION_MAX_CELLS: '2000000' });
    const tenant = await platform.tenant();
    headers = { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey };
  });
  after(() => platform?.stop());

  for (const op of operations) {
    it(`${op.operationId}: ${op.method} ${op.path} answers no 5xx and only problems of the contract`, async function () {
      this.timeout(120_000);
      const requests = requestsFor(op, {
        ids: {},
        pathValues: { inspiration_id: ['house_picks', 'value_stars'], base: ['EUR', 'USD', 'JPY', 'XXX'], quote: ['EUR', 'GBP', 'KRW', 'XXX'] },
        headers,
        queryValues: {
          universe_name: fc.constantFrom('GLOBAL', 'ROBO', 'DEFAULT', 'NOPE'),
          instrument_universe: fc.constantFrom(undefined, 'ROBO', 'GLOBAL'),
          from: fc.constantFrom('2026-10-01', '2024-01-01', '2026-11-21', '1990-01-01'),
          to: fc.constantFrom('2026-11-20', '2026-10-02', '2090-12-31'),
          normalization_universe: fc.constantFrom(undefined, 'GLOBAL'),
          fields:
            op.operationId === 'getXrayUniverse'
              ? fc.subarray(['VALUE_STARS', 'GROWTH_STARS', 'QUALITY_STARS', 'NOPE'], { minLength: 1 })
              : fc.subarray(['NAME', 'PRICE', 'PRICE_DATE', 'ASSET_CLASS', 'NOPE'], { minLength: 1 }),
        },
        headerValues: { accept: fc.constantFrom(undefined, 'application/json', 'application/vnd.apache.arrow.stream', 'application/octet-stream', '*/*') },
      });
      await fuzzOperation({
        base: platform.dataUrl,
        op,
        requests,
        seed: fuzzSeed(),
        runs: fuzzRuns(40),
        // Every operation of the data interface is built: 501 is a failure like any 5xx.
        check: (_request, answer) => answerProblem(answer, codes, false),
      });
    });
  }
});
