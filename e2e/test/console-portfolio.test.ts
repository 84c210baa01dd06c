import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { backdatePortfolio, weekdaysBetween } from '@platform/test-support/backdate';
import { eventsSettled } from '@platform/test-support/database';
import { call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { dollarEtfModel, eurEtfModel } from '../src/sample-model.ts';
import { SCREENSHOTS, openBrowser, type ConsoleBrowser } from './console-chromium.ts';

// The console's portfolio and events pages (docs/adr/0036-administration-console.md) in Debian's
// Chromium against both real services and the optimizer (docs/adr/0038-browser-tests.md): a
// robo-advised portfolio funded by a deposit the simulated broker settles, optimized and its orders
// executed; a second portfolio whose stored funded_since says funded while it holds nothing; a third
// holding a dollar ETF, its versions moved into the sample's past so that it has a value history.
// What the pages show is compared with what the interfaces answer. Screenshots go to
// .tmp/console-screenshots/ (docs/images/ keeps copies of portfolio-orders, events-range and
// portfolio-history).

type Doc = Record<string, any>;
type Order = { shares: number; expected_share_price: number; expected_transaction_cost: number };

const DAY_MS = 86_400_000;
const dayOf = (date: string) => Math.floor(Date.parse(`${date.slice(0, 10)}T00:00:00Z`) / DAY_MS);
const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("administration console in a browser: a portfolio's orders, allocation and funding, and the events by entity and time", function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let token: string;
  let browser: ConsoleBrowser;
  let page: Page;
  let robo: Doc;
  let emptyFunded: Doc;
  let dollars: Doc;
  let krona: Doc;
  let usdEtf: string;
  let policy: Doc;
  let latest: Doc;

  const api = async (method: string, path: string, body?: unknown, expect = (status: number) => status < 300) => {
    const res = await call(`${platform.managementUrl}${path}`, { method, body, token });
    assert.ok(expect(res.status), `${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const dataApi = async (path: string, body?: unknown) => {
    const res = await call(`${platform.dataUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey },
      body,
    });
    assert.equal(res.status, 200, `${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  /** Waits for what the interface answers to satisfy `done`, polling it (the optimizer and the broker work in the background). */
  const eventually = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    for (let i = 0; i < 600; i++) {
      const value = await probe();
      if (value !== undefined) return value;
      await sleep(100);
    }
    return assert.fail(`waited in vain for ${what}`);
  };
  const feedRead = () =>
    page.waitForFunction(() =>
      /\d+ events?( in the range \(of \d+ read\))? · checked/.test((globalThis as any).document.querySelector('.feed-state')?.textContent ?? ''),
    );

  before(async () => {
    platform = await startTestPlatform({ BROKER_SIMULATED_LATENCY_MS: '5' }, { console: true, ownNats: true });
    tenant = await platform.tenant(undefined, { brokerIntegration: 'SERVICE' });
    token = (await call(`${platform.managementUrl}/auth/login/`, { body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret } })).body
      .access_token;
    const model = await eurEtfModel(platform.dataUrl, tenant);
    const user = await api('POST', '/users/', { first_name: 'Ada', last_name: 'Lovelace' });
    policy = await api('POST', '/policies/', {
      name: 'Balanced Growth',
      config: {
        minimum_funding_amount: '1000',
        cash_buffer: 0.02,
        rebalancing_threshold: 0.05,
        model_portfolio: { [model.equity[0]!]: 0.4, [model.equity[1]!]: 0.2, [model.bonds[0]!]: 0.3 },
      },
    });
    const portfolio = (name: string, manager: string, settings: Doc) =>
      api('POST', '/portfolios/', {
        name,
        owned_by_user_id: user.id,
        base_currency: 'EUR',
        money_type: 'REAL_MONEY',
        config: { manager, manager_version: 1, manager_settings: settings },
        brokerage_account: { bank_account_type: 'IBAN', bank_account_number: 'DE89370400440532013000' },
      });
    robo = await portfolio('Robo Growth', 'ROBO_ADVISOR_DISCRETIONARY', { policy_id: policy.id });
    await api('POST', '/events/deposit/', { data: { amount: '10000.00', currency: 'EUR', portfolio: robo.id, external_id: 'dep-1' } });
    latest = await eventually('the orders executed', async () => {
      const res = await call(`${platform.managementUrl}/portfolios/${robo.id}/optimizations/latest/`, { token });
      return res.status === 200 && res.body.execution_status === 'EXECUTED' ? res.body : undefined;
    });
    // Funded by its stored field (write-once, set by a machine client) while it holds nothing at all.
    emptyFunded = await portfolio('Stored Funding', 'USER_MANAGED', {});
    await api('PATCH', `/portfolios/${emptyFunded.id}`, { funded_since: '2026-01-02T03:04:05.000Z' });
    // A dollar ETF beside euro cash, held since a few business days into the sample's last weeks.
    usdEtf = (await dollarEtfModel(platform.dataUrl, tenant)).usdEquity[0]!;
    dollars = await portfolio('Dollar Holdings', 'USER_MANAGED', {});
    await api('PATCH', `/portfolios/${dollars.id}`, { portfolio: { [usdEtf]: 7, $EUR: 500 } });
    const priced = await dataApi('/data/reference/query/', { instrument_ids: [usdEtf], fields: ['PRICE_DATE'], fields_extra: [] });
    const end = dayOf(priced.data[usdEtf].price_date);
    const days = weekdaysBetween(end - 40, end);
    await backdatePortfolio(platform.database.db, tenant.tenantId, dollars.id, [days[0]!, days[3]!]);
    // Cash in a currency the reference data has no rate of.
    krona = await portfolio('Krona Cash', 'USER_MANAGED', {});
    await api('PATCH', `/portfolios/${krona.id}`, { portfolio: { $EUR: 100, $ISK: 5000 } });
    await backdatePortfolio(platform.database.db, tenant.tenantId, krona.id, [days[0]!, days[3]!]);
    await eventsSettled(platform.database.db);

    browser = await openBrowser();
    page = browser.page;
    await page.goto(`${platform.managementUrl}/console/#/portfolio/${robo.id}`);
    await page.getByLabel('Access key id').fill(tenant.accessKeyId);
    await page.getByLabel('Secret access key').fill(tenant.secret);
    await page.getByLabel('Data API key (optional)').fill(tenant.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Portfolio Robo Growth' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it("shows the latest optimization's orders inline, each with the status of its booked transaction", async () => {
    const orders = latest.orders as Record<string, Order>;
    assert.ok(Object.keys(orders).length > 0, 'the optimizer proposed orders');
    const booked = await api('GET', `/portfolios/${robo.id}/transactions/?limit=100&query=${encodeURIComponent(`optimization_id eq '${latest.id}'`)}`);
    const statusOf = new Map<string, string>(booked.results.map((t: Doc) => [t.instrument_id, t.status]));
    const rows = page.locator('table.orders tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), Object.keys(orders).length);
    for (const [isin, order] of Object.entries(orders)) {
      const cells = await page.locator(`table.orders tr[data-isin="${isin}"] td`).allInnerTexts();
      const [name, side, shares, price, cost, status] = cells;
      assert.ok(name, `the instrument's name from the data service: ${cells.join(' | ')}`);
      assert.equal(side, order.shares < 0 ? 'sell' : 'buy');
      assert.equal(Number(shares!.replace(/,/g, '')), order.shares);
      assert.equal(Number(price!.replace(/,/g, '')), Number(order.expected_share_price.toFixed(2)));
      assert.equal(Number(cost!.replace(/,/g, '')), Number(order.expected_transaction_cost.toFixed(2)));
      assert.equal(status, statusOf.get(isin), `${isin}: the status of its ORDER transaction`);
    }
    assert.match(await page.locator('#orders .count').innerText(), new RegExp(`${latest.id} · SUCCESS`));
  });

  it("draws the allocation against the policy's model portfolio, the weights those of the holdings at the data service's prices", async () => {
    const doc = await api('GET', `/portfolios/${robo.id}`);
    const holdings = doc.portfolio as Record<string, number>;
    const isins = Object.keys(holdings).filter((key) => !key.startsWith('$'));
    const prices = await call(`${platform.dataUrl}/data/reference/query/`, {
      method: 'POST',
      headers: { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey },
      body: { instrument_ids: isins, fields: ['PRICE'], fields_extra: [] },
    });
    const values = Object.entries(holdings).map(([key, quantity]) => [key, key.startsWith('$') ? quantity : quantity * prices.body.data[key].price] as const);
    const total = values.reduce((sum, [, value]) => sum + value, 0);
    const model = policy.config.model_portfolio as Record<string, number>;
    const targets = { ...model, $EUR: 1 - Object.values(model).reduce((a, b) => a + b, 0) };

    await page.locator('svg.allocation-chart g.allocation-row').first().waitFor();
    const drawn = await page.locator('svg.allocation-chart g.allocation-row').evaluateAll((rows: any[]) =>
      rows.map((row) => ({
        key: row.getAttribute('data-key'),
        current: Number(row.getAttribute('data-current')),
        model: Number(row.getAttribute('data-model')),
        currentWidth: Number(row.querySelector('rect.current').getAttribute('width')),
        modelWidth: Number(row.querySelector('rect.model').getAttribute('width')),
      })),
    );
    assert.deepEqual(drawn.map((r) => r.key).sort(), [...new Set([...Object.keys(targets), ...Object.keys(holdings)])].sort());
    for (const row of drawn) {
      const value = values.find(([key]) => key === row.key)?.[1] ?? 0;
      assert.ok(Math.abs(row.current - value / total) < 1e-4, `${row.key}: ${row.current} drawn, ${value / total} held`);
      assert.ok(Math.abs(row.model - ((targets as Record<string, number>)[row.key] ?? 0)) < 1e-4, `${row.key}: target ${row.model}`);
    }
    // One scale for both bars of every row: widths in proportion to the weights.
    const [widest] = [...drawn].sort((a, b) => b.current - a.current);
    for (const row of drawn) assert.ok(Math.abs(row.currentWidth / widest!.currentWidth - row.current / widest!.current) < 0.01, row.key!);
    assert.match(await page.locator('dd[data-fact="Policy"]').innerText(), /Balanced Growth/);
  });

  it('dates "Funded since" from the first settled deposit while the portfolio holds something', async () => {
    const deposits = await api('GET', `/portfolios/${robo.id}/transactions/?query=${encodeURIComponent("type eq 'CASH' and status eq 'SETTLED'")}`);
    assert.equal(deposits.results.length, 1);
    const funded = page.locator('dd[data-fact="Funded since"] [data-funded]');
    await funded.waitFor();
    assert.equal(await funded.getAttribute('data-funded'), 'deposit');
    assert.equal(await funded.getAttribute('datetime'), deposits.results[0].datetime);
    await page.locator('#orders table').waitFor();
    await shot('portfolio-orders');
  });

  it('says a portfolio that holds nothing is not funded, whatever its stored funded_since says', async () => {
    const stored = await api('GET', `/portfolios/${emptyFunded.id}`);
    assert.equal(stored.funded_since, '2026-01-02T03:04:05.000Z', 'the stored field says funded');
    assert.deepEqual(stored.portfolio, {});
    await page.goto(`${platform.managementUrl}/console/#/portfolio/${emptyFunded.id}`);
    await page.getByRole('heading', { name: 'Portfolio Stored Funding' }).waitFor();
    const funded = page.locator('dd[data-fact="Funded since"] [data-funded]');
    await funded.waitFor();
    assert.equal(await funded.getAttribute('data-funded'), 'empty');
    const text = await page.locator('dd[data-fact="Funded since"]').innerText();
    assert.match(text, /not funded: holds no cash and no position/);
    assert.match(text, /its funded_since field: 02\/01\/2026/);
    await page.getByText('No holdings yet.').waitFor();
    await page.getByText('No optimization yet.').waitFor();
  });

  it("filters the events by entity through the interface, with the entity's name, and shows only that entity's events", async () => {
    await page.goto(`${platform.managementUrl}/console/#/events`);
    await page.getByRole('heading', { name: 'Events', exact: true }).waitFor();
    await page.getByLabel('Entity id').fill(robo.id);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('.entity-name strong').waitFor();
    assert.equal(await page.locator('.entity-name strong').innerText(), 'Robo Growth');
    await feedRead();
    const expected = await api('GET', `/events/?limit=1000&entity_id=${robo.id}`);
    assert.ok(expected.results.length >= 3, `events of the portfolio: ${expected.results.length}`);
    const shown = await page.locator('table.feed tbody tr').evaluateAll((rows: any[]) => rows.map((row) => row.getAttribute('data-event-id')));
    assert.deepEqual(shown, expected.results.map((e: Doc) => e.id).reverse());
    assert.equal(await page.locator(`table.feed tr[data-entity-id="${emptyFunded.id}"]`).count(), 0);
    // Each row names the portfolio it is about: its own events by name, its optimization's as "of" it.
    const named = await page
      .locator('table.feed tbody tr')
      .evaluateAll((rows: any[]) => rows.map((row) => [row.getAttribute('data-entity-id'), row.querySelector('.row-name')?.textContent]));
    for (const [entityId, name] of named) assert.equal(name, entityId === robo.id ? 'Robo Growth' : 'of Robo Growth', `${entityId}`);
    assert.ok(
      named.some(([entityId]) => entityId === latest.id),
      'an event of its optimization',
    );
    assert.match(page.url(), new RegExp(`entity=${robo.id}`));
  });

  it('filters the events by a time range, from inclusive to exclusive, applied to the events read', async () => {
    const all = (await api('GET', '/events/?limit=1000')).results as Doc[];
    const times = [...new Set(all.map((e) => e.created as string))].sort();
    assert.ok(times.length >= 4, `distinct event times: ${times.length}`);
    const from = times[1]!;
    const to = times[times.length - 1]!;
    const within = all.filter((e) => e.created >= from && e.created < to);
    // The fields are datetime-local (no zone): the page reads them as UTC, to the millisecond.
    const field = (iso: string) => iso.replace(/Z$/, '');
    await page.goto(`${platform.managementUrl}/console/#/events?from=${field(from)}&to=${field(to)}`);
    await feedRead();
    const shown = await page.locator('table.feed tbody tr').evaluateAll((rows: any[]) => rows.map((row) => row.getAttribute('data-event-id')));
    assert.deepEqual(shown, within.map((e) => e.id).reverse());
    assert.ok(shown.length > 0 && shown.length < all.length, `${shown.length} of ${all.length}`);
    assert.match(await page.locator('.feed-state').innerText(), new RegExp(`^${within.length} events? in the range \\(of ${all.length} read\\)`));
    assert.equal(Date.parse(`${await page.getByLabel('From (UTC)').inputValue()}Z`), Date.parse(from), 'the form shows the range it applies');
    await shot('events-range');

    // A range that ends before it starts is refused in words and changes neither the address nor the rows.
    const before = page.url();
    await page.getByLabel('From (UTC)').fill('2026-11-27T10:00');
    await page.getByLabel('To (UTC)').fill('2026-11-27T09:00');
    await page.getByRole('button', { name: 'Apply' }).click();
    assert.equal(await page.locator('#filter-error').innerText(), 'From must be before To.');
    assert.equal(page.url(), before);
    assert.equal(await page.locator('table.feed tbody tr').count(), shown.length);
  });

  it('shows a refused filter as the field, what is wrong and an example, never the regular expression the interface quotes', async () => {
    const answer = await call(`${platform.managementUrl}/events/?entity_id=P123`, { token });
    assert.equal(answer.status, 400);
    assert.deepEqual(answer.body.errors[0].loc, ['query', 'entity_id']);
    assert.match(answer.body.errors[0].msg, /must match pattern "\^/, 'the interface words it by its pattern');
    await page.goto(`${platform.managementUrl}/console/#/events`);
    await page.getByLabel('Entity id').fill('P123');
    await page.getByRole('button', { name: 'Apply' }).click();
    const issue = page.locator('.problem-errors li[data-field="entity_id"]');
    await issue.waitFor();
    const text = await issue.innerText();
    assert.match(text, /^entity_id \(in the address \(query\)\) must be an id: its type letter followed by 26 characters of a ULID/);
    const example = await issue.locator('.example').innerText();
    assert.match(example, /^[A-Z][0-9A-HJKMNP-TV-Z]{26}$/, 'the example is an id the interface takes');
    assert.equal((await call(`${platform.managementUrl}/events/?entity_id=${example}`, { token })).status, 200);
    const problem = await page.locator('.problem').innerText();
    assert.doesNotMatch(problem, /\^|\{26\}|\[0-9/);
    assert.match(problem, /400 Bad Request/);
    assert.equal(await page.locator('table.feed tbody tr').count(), 0);
    assert.match(await page.locator('.feed-state').innerText(), /the request was refused/);
    await shot('events-refused');
  });

  it("values a dollar ETF in the base currency at the reference rate of its price's date, the rate shown beside it", async () => {
    const ref = (await dataApi('/data/reference/query/', { instrument_ids: [usdEtf], fields: ['PRICE', 'CURRENCY', 'PRICE_DATE'], fields_extra: [] })).data[
      usdEtf
    ];
    assert.equal(ref.currency, 'USD');
    const priceDay = dayOf(ref.price_date);
    const series = await dataApi(`/data/fx-rates/EUR/USD?from=${isoDay(priceDay - 10)}&to=${isoDay(priceDay)}`);
    const rate = series.data.rates.at(-1) as { date: string; rate: number };
    assert.ok(rate, 'a EUR/USD rate on or before the price date');
    const expected = (7 * ref.price) / rate.rate;

    await page.goto(`${platform.managementUrl}/console/#/portfolio/${dollars.id}`);
    await page.getByRole('heading', { name: 'Portfolio Dollar Holdings' }).waitFor();
    const row = page.locator(`table.holdings tr[data-key="${usdEtf}"]`);
    await row.waitFor();
    const shownValue = Number(await row.getAttribute('data-base-value'));
    assert.ok(Math.abs(shownValue - expected) <= 0.005 + 1e-9, `${shownValue} shown, ${expected} expected`);
    assert.equal(Number(await row.getAttribute('data-rate')), rate.rate);
    assert.match(await row.locator('td.rate').innerText(), new RegExp(`EUR/USD of ${rate.date}`));
    const total = Number(await page.locator('table.holdings tr.total').getAttribute('data-total'));
    assert.ok(Math.abs(total - (expected + 500)) <= 0.01, `total ${total}`);
    assert.doesNotMatch(await page.locator('table.holdings').innerText(), /no EUR\/USD rate/);
  });

  it('draws the value history of a chosen period with as many points as the interface answers for it', async () => {
    const asked = page.waitForResponse((res) => res.url().includes(`/portfolios/${dollars.id}/history/`));
    await page.locator('#history button[data-period="6M"]').click();
    const response = await asked;
    assert.equal(response.status(), 200, await response.text());
    const query = new URL(response.url()).search;
    assert.match(query, /frequency=D/, 'a young portfolio is shown daily');
    const history = await api('GET', `/portfolios/${dollars.id}/history/${query}`);
    assert.ok(history.points.length >= 20, `points: ${history.points.length}`);
    const chart = page.locator('svg.history-chart');
    await chart.waitFor();
    assert.equal(Number(await chart.getAttribute('data-points')), history.points.length);
    const d = await chart.locator('path.value').getAttribute('d');
    assert.equal(d!.split(' ').filter((part) => /^[ML]/.test(part)).length, history.points.length, 'one vertex per point');
    assert.equal(await chart.locator('path.deposits').count(), 1);
    assert.equal(await chart.locator('path.model-value').count(), 0, 'no policy, no model');
    const twr = await page.locator('dd[data-summary="Time-weighted return"]').innerText();
    assert.equal(twr, `${(history.summary.twr * 100).toLocaleString('en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} %`);
    await shot('portfolio-history');
  });

  it('says a currency without a rate has none, in its row and in the total, instead of converting it at 1, and shows the refused history as its problem', async () => {
    const rates = await call(
      `${platform.dataUrl}/data/fx-rates/EUR/ISK?from=${isoDay(dayOf(new Date().toISOString()) - 10)}&to=${isoDay(dayOf(new Date().toISOString()))}`,
      {
        headers: { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey },
      },
    );
    assert.equal(rates.status, 404, 'the reference data has no ISK rate');
    const refused = await call(`${platform.managementUrl}/portfolios/${krona.id}/history/`, { token });
    assert.equal(refused.status, 422, refused.text);

    await page.goto(`${platform.managementUrl}/console/#/portfolio/${krona.id}`);
    await page.getByRole('heading', { name: 'Portfolio Krona Cash' }).waitFor();
    const row = page.locator('table.holdings tr[data-key="$ISK"]');
    await row.waitFor();
    assert.equal(await row.getAttribute('data-base-value'), null, 'no value in EUR');
    assert.match(await row.innerText(), /no EUR\/ISK rate/);
    assert.equal(Number(await page.locator('table.holdings tr.total').getAttribute('data-total')), 100, 'the total leaves the krona out');
    assert.match(await page.locator('table.holdings tr.total').innerText(), /no EUR\/ISK rate/);
    const problem = page.locator('#history .problem');
    await problem.waitFor();
    assert.match(await problem.locator('.problem-title').innerText(), /^422 /);
    assert.equal(await problem.locator('.problem-meta code').first().innerText(), refused.body.code);
    assert.equal(await page.locator('#history svg.history-chart').count(), 0);
  });

  it('threw no script error', () => {
    assert.deepEqual(browser.pageErrors, []);
  });
});
