import assert from 'node:assert/strict';
import { tableFromIPC } from 'apache-arrow';
import type { components } from '@platform/api-types/management';
import { backdatePortfolio, weekdaysBetween } from '@platform/test-support/backdate';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { createDataClient, createManagementClient, isProblem, type ManagementClient } from '../src/index.ts';

type Point = components['schemas']['PortfolioHistoryPoint'];

const DAY_MS = 86_400_000;
const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
const ARROW = 'application/vnd.apache.arrow.stream';

/**
 * GET /portfolios/{portfolio_id}/history/ through the client (docs/adr/0058-portfolio-history.md): the JSON answer
 * typed by the contract, the Arrow one read as a table. A cash-only portfolio, backdated into the sample's past,
 * whose every figure follows from its two versions and one deposit.
 */
describe('client package: a portfolio’s history as JSON and as Arrow', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let api: ManagementClient;
  let portfolioId: string;
  let days: number[];
  let depositDay: number;

  before(async () => {
    // A NATS server of its own, so that only this platform's data service answers its history requests.
    platform = await startTestPlatform({ HISTORY_TIMEOUT_MS: '3000', OPTIMIZER: 'false' }, { ownNats: true });
    tenant = await platform.tenant();
    api = createManagementClient({ baseUrl: platform.managementUrl, credentials: { accessKeyId: tenant.accessKeyId, secretAccessKey: tenant.secret } });
    // The last close of the reference data, as the data interface tells it: the history ends there at the latest.
    const data = createDataClient({ baseUrl: platform.dataUrl, tenantId: tenant.tenantId, apiKey: tenant.apiKey });
    const universe = (await data.GET('/data/reference/universe/', { params: { query: { universe_name: 'ROBO', fields: ['PRICE_DATE'] } } })).data!;
    const lastClose = Object.values(universe.data)
      .map((fields) => String((fields as { price_date: string }).price_date))
      .sort()
      .at(-1)!;
    const end = Math.floor(Date.parse(`${lastClose}T00:00:00Z`) / DAY_MS);
    days = weekdaysBetween(end - 27, end);

    const { data: user } = await api.POST('/users/', { body: { first_name: 'Ada', last_name: 'Lovelace' } });
    const { data: portfolio } = await api.POST('/portfolios/', {
      body: {
        name: 'Savings',
        owned_by_user_id: user!.id,
        base_currency: 'EUR',
        money_type: 'REAL_MONEY',
        config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
        portfolio: { $EUR: 1000 },
      },
    });
    portfolioId = portfolio!.id;
    // A deposit of 500 the client booked, and the cash it raised: version 2.
    await api.POST('/portfolios/{portfolio_id}/transactions/', {
      params: { path: { portfolio_id: portfolioId } },
      body: { type: 'CASH', status: 'SETTLED', quantity: '500.00', currency: 'EUR' },
    });
    await api.PATCH('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: portfolioId } }, body: { portfolio: { $EUR: 1500 } } });
    depositDay = days[8]!;
    await backdatePortfolio(platform.database.db, tenant.tenantId, portfolioId, [days[0]!, depositDay]);
  });
  after(() => platform?.stop());

  const period = () => ({ from: isoDay(days[0]!), to: isoDay(days.at(-1)!) });
  /** What each business day of the period holds: 1000 in cash, 1500 from the deposit on, which is no return. */
  const expected = (): Point[] =>
    days.map((day) => ({
      date: isoDay(day),
      value: day >= depositDay ? 1500 : 1000,
      cash: day >= depositDay ? 1500 : 1000,
      net_deposits: day >= depositDay ? 500 : 0,
      twr: 0,
      drawdown: 0,
    }));

  it('answers JSON typed by the contract: one point per business day, the deposit counted, no return', async () => {
    const { data, response } = await api.GET('/portfolios/{portfolio_id}/history/', {
      params: { path: { portfolio_id: portfolioId }, query: { ...period(), frequency: 'D' } },
    });
    assert.equal(response.headers.get('content-type')?.split(';')[0], 'application/json');
    // Typed: these are the contract's PortfolioHistory and PortfolioHistoryPoint, checked by the compiler.
    const history: components['schemas']['PortfolioHistory'] = data!;
    const points: Point[] = history.points;
    assert.equal(history.base_currency, 'EUR');
    assert.equal(history.frequency, 'D');
    assert.deepEqual(points, expected());
    assert.deepEqual([history.summary.start_value, history.summary.end_value, history.summary.net_deposits, history.summary.twr], [1000, 1500, 500, 0]);
  });

  it('answers the same points as an Arrow stream with Accept and parseAs, the summary in the schema metadata', async () => {
    const json = (
      await api.GET('/portfolios/{portfolio_id}/history/', { params: { path: { portfolio_id: portfolioId }, query: { ...period(), frequency: 'W' } } })
    ).data!;
    const { data, response } = await api.GET('/portfolios/{portfolio_id}/history/', {
      params: { path: { portfolio_id: portfolioId }, query: { ...period(), frequency: 'W' } },
      headers: { accept: ARROW },
      parseAs: 'arrayBuffer',
    });
    assert.equal(response.headers.get('content-type'), ARROW);
    const table = tableFromIPC(new Uint8Array(data!));
    assert.deepEqual(
      table.schema.fields.map((f) => f.name),
      ['date', 'value', 'cash', 'net_deposits', 'twr', 'drawdown'],
    );
    for (const name of ['value', 'cash', 'net_deposits', 'twr', 'drawdown'])
      assert.equal(String(table.schema.fields.find((f) => f.name === name)!.type), 'Float64', name);
    const rows = table.toArray().map((row) => ({
      date: new Date(row.date as number).toISOString().slice(0, 10),
      value: row.value,
      cash: row.cash,
      net_deposits: row.net_deposits,
      twr: row.twr,
      drawdown: row.drawdown,
    }));
    assert.ok(rows.length >= 4 && rows.length < days.length, `weekly points: ${rows.length}`);
    assert.deepEqual(rows, json.points);
    assert.deepEqual(JSON.parse(table.schema.metadata.get('summary')!), json.summary);
    assert.equal(table.schema.metadata.get('base_currency'), 'EUR');
  });

  it('refuses a period whose end is before its start as an ApiProblem at the field', async () => {
    const refused = await api
      .GET('/portfolios/{portfolio_id}/history/', {
        params: { path: { portfolio_id: portfolioId }, query: { from: isoDay(days.at(-1)!), to: isoDay(days[0]!) } },
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    assert.ok(isProblem(refused, 'validation_failed'), String(refused));
    assert.equal(refused.status, 422);
    assert.ok(
      refused.errors.some((e) => e.loc.includes('to') || e.loc.includes('from')),
      JSON.stringify(refused.errors),
    );
  });
});
