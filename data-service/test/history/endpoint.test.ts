import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { connectNats, newUlid, subjects } from '@platform/shared';
import { testWorkDir } from '@platform/test-support/database';
import { build, machineApi, userApi, type Api } from '@platform/test-support/fixtures';
import { backdatePortfolio, weekdaysBetween } from '@platform/test-support/backdate';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { openDuckStore, type DuckStore } from '../../src/store/duckdb.ts';

// GET /portfolios/{id}/history/ end to end (docs/adr/0058-portfolio-history.md): the management
// service reads the portfolio, the data service computes over NATS from the reference closes and rates.

type Point = { date: string; value: number; cash: number; net_deposits: number; twr: number; drawdown: number; model_value?: number };
type History = { base_currency: string; frequency: string; points: Point[]; summary: Record<string, number | null> };

const DAY_MS = 86_400_000;
const dayOf = (iso: string) => Math.floor(Date.parse(`${iso.slice(0, 10)}T00:00:00Z`) / DAY_MS);
const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
const cents = (x: number) => Math.round(x * 100) / 100;
/** The data service's limit on the age of a rate (docs/adr/0057-fx-rates.md), set here rather than left to its default. */
const FX_MAX_AGE_DAYS = 3;

describe('GET /portfolios/{portfolio_id}/history/ through both services', function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let duck: DuckStore;
  let tenant: TestTenant;
  let api: Api;
  let owner: string;
  let portfolioId: string;
  /** Closes of the held instruments and their currencies, by ISIN then day. */
  const closes = new Map<string, { currency: string; byDay: Map<number, number> }>();
  /** Units of a currency per 1 EUR, by day. */
  const rates = new Map<string, Map<number, number>>();
  /** The versions as the test backdated them: from which day which holdings. */
  const versions: { day: number; holdings: Record<string, number> }[] = [];
  let first: number;
  let last: number;
  let depositDay: number;
  let withdrawalDay: number;

  const lastOnOrBefore = (series: Map<number, number>, day: number) => {
    for (let d = day; d > day - 60; d--) if (series.has(d)) return series.get(d)!;
    throw new Error(`nothing on or before ${isoDay(day)}`);
  };
  /** Σ units × close (in EUR through its rate) + cash, as the day's end holdings are worth. */
  const expectedValue = (day: number) => {
    const version = [...versions].reverse().find((v) => v.day <= day);
    if (!version) return 0;
    let value = 0;
    for (const [key, units] of Object.entries(version.holdings)) {
      if (key.startsWith('$')) value += units;
      else {
        const { currency, byDay } = closes.get(key)!;
        const rate = currency === 'EUR' ? 1 : lastOnOrBefore(rates.get(currency)!, day);
        value += (units * lastOnOrBefore(byDay, day)) / rate;
      }
    }
    return value;
  };
  const history = (query: string, headers: Record<string, string> = {}, as: Api = api) =>
    as('GET', `/portfolios/${portfolioId}/history/${query}`, undefined, headers);

  before(async () => {
    // A NATS server of its own, so that no other test's data service answers; no optimizer, whose
    // orders would change the holdings the test sets.
    platform = await startTestPlatform({ HISTORY_TIMEOUT_MS: '3000', OPTIMIZER: 'false', FX_MAX_AGE_DAYS: String(FX_MAX_AGE_DAYS) }, { ownNats: true });
    duck = await openDuckStore({ path: join(testWorkDir(), `history-test-${newUlid()}.duckdb`), referenceDir: join(testWorkDir(), 'reference') });
    // Two instruments of the sample universe, one in EUR and one in another currency, with closes on
    // every weekday of the last ~50 days of the sample.
    const picked = await duck.use(async ({ conn, ref }) => {
      const end = Number((await conn.runAndReadAll(`select (max(date) - date '1970-01-01')::int from ${ref}.prices`)).getRows()[0]![0]);
      const rows = await conn.runAndReadAll(
        `select i.isin, i.currency from ${ref}.instruments i join ${ref}.prices p using (isin)
         where p.date > date '1970-01-01' + ${end - 80} and p.close > 0 and (i.currency = 'EUR' or i.currency in (select currency from ${ref}.fx_rates))
         group by i.isin, i.currency having count(*) >= 50 order by (i.currency = 'EUR') desc, i.isin`,
      );
      const all = rows.getRows().map(([isin, currency]) => ({ isin: String(isin), currency: String(currency) }));
      const eur = all.find((r) => r.currency === 'EUR')!;
      const other = all.find((r) => r.currency !== 'EUR')!;
      for (const { isin, currency } of [eur, other]) {
        const series = (
          await conn.runAndReadAll(`select (date - date '1970-01-01')::int, close::double from ${ref}.prices where isin = $1 and close > 0`, [isin])
        ).getRows();
        closes.set(isin, { currency, byDay: new Map(series.map(([d, c]) => [Number(d), Number(c)])) });
      }
      const fx = (
        await conn.runAndReadAll(`select (date - date '1970-01-01')::int, rate::double from ${ref}.fx_rates where currency = $1`, [other.currency])
      ).getRows();
      rates.set(other.currency, new Map(fx.map(([d, r]) => [Number(d), Number(r)])));
      return { eur: eur.isin, other: other.isin, end };
    });
    // The service books both cash moves on the portfolio (docs/adr/0009-funding-modes.md).
    tenant = await platform.tenant(undefined, { brokerIntegration: 'SERVICE' });
    api = await machineApi(platform, tenant);
    owner = (await api('POST', '/users/', build.user())).body.id;
    const account = { brokerage_account: { bank_account_type: 'IBAN', bank_account_number: 'DE89370400440532013000' } };
    const policy = await api(
      'POST',
      '/policies/',
      build.policy({ config: { model_portfolio: { [picked.eur]: 0.5, [picked.other]: 0.3 }, asset_class_bands: {} } }),
    );
    assert.equal(policy.status, 201, policy.text);
    const created = await api('POST', '/portfolios/', build.roboPortfolio(owner, { policy_id: policy.body.id }, account));
    assert.equal(created.status, 201, created.text);
    portfolioId = created.body.id;
    const patch = async (holdings: Record<string, number>) => {
      const res = await api('PATCH', `/portfolios/${portfolioId}`, { portfolio: holdings });
      assert.equal(res.status, 200, res.text);
    };
    await patch({ [picked.eur]: 10, $EUR: 500 });
    const deposit = await api('POST', '/events/deposit/', { data: { portfolio: portfolioId, amount: '1000.00', currency: 'EUR', external_id: 'dep-1' } });
    assert.equal(deposit.status, 202, deposit.text);
    for (let i = 0; i < 200; i++) {
      const tx = await api('GET', `/portfolios/${portfolioId}/transactions/${deposit.body.id}`);
      if (tx.body.status === 'SETTLED') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const current = (await api('GET', `/portfolios/${portfolioId}`)).body.portfolio as Record<string, number>;
    assert.equal(current.$EUR, 1500, 'the deposit settled');
    await patch({ ...current, [picked.other]: 3 });
    const withdrawal = await api('POST', '/events/withdraw/', { data: { portfolio: portfolioId, amount: '200.00', currency: 'EUR', external_id: 'wd-1' } });
    assert.equal(withdrawal.status, 201, withdrawal.text);

    // The service writes versions and cash moves at the time they happen: move them into the
    // sample's past, each version three weekdays after the previous one, and each cash move to the
    // day of the version that booked it.
    const weekdays = weekdaysBetween(picked.end - 60, picked.end);
    const db = platform.database.db;
    versions.push(
      ...(await backdatePortfolio(
        db,
        tenant.tenantId,
        portfolioId,
        weekdays.filter((_, i) => i % 3 === 0 && i <= weekdays.length - 10),
      )),
    );
    // Which version booked each cash move, read from the cash it added, not from the helper's dating.
    const bookedAt = (delta: number) => versions.find((v, k) => k > 0 && (v.holdings.$EUR ?? 0) - (versions[k - 1]!.holdings.$EUR ?? 0) === delta)!.day;
    depositDay = bookedAt(1000);
    withdrawalDay = bookedAt(-200);
    assert.ok(depositDay < withdrawalDay);
    const moves = (await db('entities').select('doc').where({ tenant_id: tenant.tenantId, parent_id: portfolioId, type: 'transactions' })) as {
      doc: { quantity: string; datetime: string };
    }[];
    assert.deepEqual(
      moves.map((move) => [move.doc.quantity, dayOf(move.doc.datetime)]).sort(),
      [
        ['-200.00', withdrawalDay],
        ['1000.00', depositDay],
      ],
      'each cash move is dated on the day of the version that booked it',
    );
    first = versions[0]!.day;
    last = weekdays[weekdays.length - 1]!;
  });
  after(async () => {
    await duck?.close();
    await platform?.stop();
  });

  it('values every business day as Σ units × close (through the rate) + cash, to the cent, with the net deposits booked', async () => {
    const res = await history(`?from=${isoDay(first)}&to=${isoDay(last)}`);
    assert.equal(res.status, 200, res.text);
    const answer = res.body as History;
    assert.equal(answer.base_currency, 'EUR');
    assert.deepEqual(
      answer.points.map((p) => p.date),
      weekdaysBetween(first, last).map(isoDay),
    );
    // Rounded to the cent: within half a cent of the exact sum.
    for (const point of answer.points) {
      const exact = expectedValue(dayOf(point.date));
      assert.ok(Math.abs(point.value - exact) <= 0.005 + 1e-9, `${point.date}: ${point.value} for ${exact}`);
      assert.equal(point.value, cents(point.value), `${point.date} is in cents`);
    }
    for (const point of answer.points) {
      const day = dayOf(point.date);
      assert.equal(point.net_deposits, day >= withdrawalDay ? 800 : day >= depositDay ? 1000 : 0, point.date);
    }
    assert.equal(answer.summary.net_deposits, 800);
    assert.equal(answer.summary.end_value, answer.points.at(-1)!.value);
    assert.equal(answer.summary.start_value, answer.points[0]!.value);
    assert.ok(answer.points.every((p) => p.drawdown <= 0));
  });

  it('starts at the creation day and ends today by default', async () => {
    const res = await history('');
    assert.equal(res.status, 200, res.text);
    const points = (res.body as History).points;
    assert.equal(points[0]!.date, isoDay(first));
    assert.ok(points.at(-1)!.date <= new Date().toISOString().slice(0, 10));
    assert.ok(points.at(-1)!.date >= isoDay(last));
  });

  it('gives the same points as Apache Arrow', async () => {
    const json = (await history(`?from=${isoDay(first)}&to=${isoDay(last)}`)).body as History;
    const res = await fetch(`${platform.managementUrl}/portfolios/${portfolioId}/history/?from=${isoDay(first)}&to=${isoDay(last)}`, {
      headers: { authorization: `Bearer ${(api as Api & { token: string }).token}`, accept: 'application/vnd.apache.arrow.stream' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/vnd.apache.arrow.stream');
    const table = tableFromIPC(new Uint8Array(await res.arrayBuffer()));
    assert.equal(table.numRows, json.points.length);
    const rows = table.toArray().map((row) => row.toJSON() as Record<string, unknown>);
    rows.forEach((row, i) => {
      const point = json.points[i]!;
      assert.equal(new Date(Number(row.date)).toISOString().slice(0, 10), point.date);
      for (const column of ['value', 'cash', 'net_deposits', 'twr', 'drawdown'] as const) assert.equal(row[column], point[column], `${point.date} ${column}`);
    });
    assert.deepEqual(JSON.parse(table.schema.metadata.get('summary')!), json.summary);
  });

  it('samples the last business day of each week (W) and month (M), with the first and last day, at the daily values', async () => {
    const range = `from=${isoDay(first)}&to=${isoDay(last)}`;
    const daily = ((await history(`?${range}`)).body as History).points;
    const valueOn = new Map(daily.map((p) => [p.date, p]));
    for (const [frequency, periodOf] of [
      ['W', (d: number) => Math.floor((d + 3) / 7)],
      ['M', (d: number) => isoDay(d).slice(0, 7)],
    ] as const) {
      const res = await history(`?${range}&frequency=${frequency}`);
      assert.equal(res.status, 200, res.text);
      const days = daily.map((p) => dayOf(p.date));
      const expected = days.filter((d, i) => i === 0 || i === days.length - 1 || periodOf(days[i + 1]!) !== periodOf(d));
      const points = (res.body as History).points;
      assert.deepEqual(
        points.map((p) => p.date),
        expected.map(isoDay),
        frequency,
      );
      for (const point of points) assert.deepEqual(point, valueOn.get(point.date), `${frequency} ${point.date}`);
    }
  });

  it("lets the owner read it, not another customer of the tenant (403) nor another tenant's client (404)", async () => {
    const ownerApi = await userApi(platform, api, owner);
    assert.equal((await history(`?from=${isoDay(first)}&to=${isoDay(last)}`, {}, ownerApi)).status, 200);
    const stranger = (await api('POST', '/users/', build.user({ first_name: 'Eve' }))).body.id;
    assertProblem(await history('', {}, await userApi(platform, api, stranger)), 403, 'forbidden');
    const other = await machineApi(platform, await platform.tenant());
    const res = await history('', {}, other);
    assertProblem(res, 404, 'not_found');
    assert.ok(!res.text.includes(tenant.tenantId));
  });

  it('refuses bad parameters naming them, and changes nothing', async () => {
    const before = await api('GET', `/portfolios/${portfolioId}`);
    const cases: [string, number, string, (string | number)[]][] = [
      ['?from=2025-13-01', 400, 'invalid_parameter', ['query', 'from']],
      ['?frequency=Q', 400, 'invalid_parameter', ['query', 'frequency']],
      [`?from=${isoDay(last)}&to=${isoDay(first)}`, 422, 'validation_failed', ['query', 'to']],
      ['?from=1990-01-01&to=2020-01-01', 422, 'validation_failed', ['query', 'frequency']],
    ];
    for (const [query, status, code, loc] of cases) {
      const res = await history(query);
      assertProblem(res, status, code);
      assert.ok(
        (res.body.errors as { loc: unknown[] }[]).some((e) => JSON.stringify(e.loc) === JSON.stringify(loc)),
        `${query} names ${loc.join('.')}: ${res.text}`,
      );
    }
    assertProblem(await history('', { accept: 'text/csv' }), 406, 'not_acceptable');
    // An instrument the reference data has no prices of is refused at the portfolio, by name.
    const unknown = await api('POST', '/portfolios/', build.portfolio(owner, { portfolio: { ZZ0000000000: 1 } }));
    assert.equal(unknown.status, 201, unknown.text);
    const refused = await api('GET', `/portfolios/${unknown.body.id}/history/?from=${isoDay(first)}`);
    assertProblem(refused, 422, 'validation_failed');
    assert.deepEqual(refused.body.errors[0].loc.slice(0, 2), ['path', 'portfolio_id']);
    assert.match(refused.body.errors[0].msg, /ZZ0000000000/);
    assertProblem(await api('GET', '/portfolios/P00000000000000000000000000/history/'), 404, 'not_found');
    const after = await api('GET', `/portfolios/${portfolioId}`);
    assert.equal(after.body.version, before.body.version);
    assert.deepEqual(after.body.portfolio, before.body.portfolio);
  });

  it('refuses a day whose dollar rate is older than FX_MAX_AGE_DAYS, naming the pair and the day, and changes nothing', async () => {
    const usd = await duck.use(async ({ conn, ref }) =>
      (await conn.runAndReadAll(`select (date - date '1970-01-01')::int, rate::double from ${ref}.fx_rates where currency = 'USD'`)).getRows(),
    );
    const usdPerEur = new Map(usd.map(([d, r]) => [Number(d), Number(r)]));
    const lastRate = Math.max(...usdPerEur.keys());
    // Dollars only: no close ends the period at the sample's last day, so its days run past the last rate.
    const dollars = await api('POST', '/portfolios/', build.portfolio(owner, { portfolio: { $USD: 100 } }));
    assert.equal(dollars.status, 201, dollars.text);
    const from = lastRate - 14;
    await backdatePortfolio(platform.database.db, tenant.tenantId, dollars.body.id, [from]);
    const before = await api('GET', `/portfolios/${dollars.body.id}`);
    // The first weekday on which the last rate, still in use, is older than the limit.
    const stale = weekdaysBetween(lastRate + FX_MAX_AGE_DAYS + 1, lastRate + FX_MAX_AGE_DAYS + 7)[0]!;
    const refused = await api('GET', `/portfolios/${dollars.body.id}/history/?from=${isoDay(from)}&to=${isoDay(stale + 7)}`);
    assertProblem(refused, 422, 'validation_failed');
    const msg = `EUR/USD rate of ${isoDay(lastRate)} is older than ${FX_MAX_AGE_DAYS} days on ${isoDay(stale)} (for USD/EUR)`;
    assert.deepEqual(refused.body.errors, [{ loc: ['path', 'portfolio_id', 'versions', 0, 'holdings', '$USD'], msg, type: 'rule' }]);
    assert.ok(refused.body.detail.endsWith(msg), refused.body.detail);
    const after = await api('GET', `/portfolios/${dollars.body.id}`);
    assert.equal(after.body.version, before.body.version);
    assert.deepEqual(after.body.portfolio, before.body.portfolio);

    // Up to the last day a rate as old as the limit converts: every day at the last rate on or before it.
    const fresh = await api('GET', `/portfolios/${dollars.body.id}/history/?from=${isoDay(from)}&to=${isoDay(lastRate + FX_MAX_AGE_DAYS)}`);
    assert.equal(fresh.status, 200, fresh.text);
    const points = (fresh.body as History).points;
    assert.deepEqual(
      points.map((p) => p.date),
      weekdaysBetween(from, lastRate + FX_MAX_AGE_DAYS).map(isoDay),
    );
    assert.ok(dayOf(points.at(-1)!.date) > lastRate, 'the period goes past the last rate');
    for (const point of points) {
      const exact = 100 / lastOnOrBefore(usdPerEur, dayOf(point.date));
      assert.ok(Math.abs(point.value - exact) <= 0.005 + 1e-9, `${point.date}: ${point.value} for ${exact}`);
    }
  });

  it('answers a period without a business day (a weekend) with no points and a summary of nulls', async () => {
    let saturday = first + 1;
    while (new Date(saturday * DAY_MS).getUTCDay() !== 6) saturday++;
    const res = await history(`?from=${isoDay(saturday)}&to=${isoDay(saturday + 1)}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.points, []);
    assert.deepEqual(Object.values(res.body.summary), [null, null, null, null, null, null]);
  });

  it("compares with the model of its policy: the same start and flows, at the model's weights", async () => {
    const range = `from=${isoDay(first)}&to=${isoDay(last)}`;
    const plain = ((await history(`?${range}`)).body as History).points;
    const res = await history(`?${range}&model=true`);
    assert.equal(res.status, 200, res.text);
    const points = (res.body as History).points as (Point & { model_twr: number; deviation: number })[];
    assert.deepEqual(
      points.map(({ date, value, twr }) => ({ date, value, twr })),
      plain.map(({ date, value, twr }) => ({ date, value, twr })),
    );
    assert.equal(points[0]!.model_value, points[0]!.value, 'the model starts at the start value');
    for (const p of points) assert.ok(Math.abs(p.deviation - (p.twr - p.model_twr)) <= 2e-8, p.date);
    // The deposit is invested at the weights: the model is worth something from then on.
    assert.ok(points.some((p) => dayOf(p.date) >= depositDay && p.model_value! > 0));
    assert.ok(points.every((p) => dayOf(p.date) < depositDay || p.model_value !== undefined));

    const bare = await api('POST', '/portfolios/', build.portfolio(owner));
    const refused = await api('GET', `/portfolios/${bare.body.id}/history/?model=true`);
    assertProblem(refused, 422, 'validation_failed');
    assert.deepEqual(refused.body.errors[0].loc, ['query', 'model']);
  });

  it('answers 503 unavailable, not 500, when no data service answers', async () => {
    await platform.dataService.stop();
    const res = await history(`?from=${isoDay(first)}&to=${isoDay(last)}`);
    assertProblem(res, 503, 'unavailable');
    // One that takes the request and never answers: the wait ends at HISTORY_TIMEOUT_MS, the same way.
    const silent = await connectNats(platform.natsUrl, 'history-test-silent');
    try {
      const taken: string[] = [];
      silent.subscribe(subjects.historyRequests(tenant.tenantId), { callback: (_e, m) => void taken.push(m.subject) });
      await silent.flush();
      const late = await history(`?from=${isoDay(first)}&to=${isoDay(last)}`);
      assertProblem(late, 503, 'unavailable');
      assert.deepEqual(taken, [subjects.historyRequests(tenant.tenantId)], 'the request was taken, and not answered');
    } finally {
      await silent.close();
    }
  });
});
