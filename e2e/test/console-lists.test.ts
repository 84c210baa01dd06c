import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { SCREENSHOTS, openBrowser, signIn, type ConsoleBrowser } from './console-chromium.ts';

// The search page's lists in a real browser against the real services
// (docs/adr/0036-administration-console.md): quick filters written into the query, headings that
// sort, page sizes and paging both ways, names beside linked ids. Every expectation is the
// interface's own answer to the query the page shows.

describe('administration console: the lists of the search page', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let api: Api;
  let browser: ConsoleBrowser;
  let page: Page;
  let ada: { id: string };
  let grace: { id: string };
  let policy: { id: string };
  let robo: { id: string };

  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await api(method, path, body);
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  /** The interface's answer to a query, as the page should show it. */
  const answer = async (query: string, limit = 20, offset = 0) =>
    ok('GET', `/portfolios/?limit=${limit}&offset=${offset}&query=${encodeURIComponent(query)}`) as Promise<{
      count: number;
      results: { id: string; name: string }[];
    }>;
  const rowIds = () => page.locator('table.data tbody tr').evaluateAll((rows: any[]) => rows.map((row) => row.getAttribute('data-id') as string));
  const queryBox = () => page.getByLabel('Query', { exact: true });
  /** Waits until the page shows the rows `first`–`last` of `count` portfolios. */
  const shows = (first: number, last: number, count: number) => page.locator('p.count', { hasText: `${first}–${last} of ${count} portfolios` }).waitFor();

  before(async () => {
    platform = await startTestPlatform({}, { console: true });
    tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
    ada = await ok('POST', '/users/', build.user({ email: 'ada@example.com' }));
    grace = await ok('POST', '/users/', build.user({ first_name: 'Grace', last_name: 'Hopper' }));
    policy = await ok('POST', '/policies/', build.policy({ name: 'Balanced' }));
    // Twelve pensions of Ada's, the last archived, and one paper robo portfolio of Grace's following the policy.
    for (let i = 1; i <= 12; i++) {
      const n = String(i).padStart(2, '0');
      await ok('POST', '/portfolios/', build.portfolio(ada.id, { name: `Pension ${n}`, external_id: `crm-${n}` }));
    }
    const last = (await answer("name eq 'Pension 12'")).results[0]!;
    await ok('PATCH', `/portfolios/${last.id}`, { archived: true });
    robo = await ok('POST', '/portfolios/', build.roboPortfolio(grace.id, { policy_id: policy.id }, { name: 'Growth', money_type: 'PAPER_MONEY' }));
    browser = await openBrowser();
    page = browser.page;
    await signIn(page, platform.managementUrl, tenant);
  });

  after(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it('shows the names of owners and policies beside their ids, each a link to its entity, from one call per page', async () => {
    const calls: string[] = [];
    page.on('request', (request) => calls.push(request.url()));
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await shows(1, 13, 13);
    const listCalls = calls.filter((url) => new URL(url).pathname !== '/console/');
    assert.equal(listCalls.length, 1, listCalls.join('\n'));
    assert.match(decodeURIComponent(listCalls[0]!), /embed=owned_by_user_id,config\.manager_settings\.policy_id/);

    const row = page.locator(`tr[data-id="${robo.id}"]`);
    const owner = row.locator('td[data-path="owned_by_user_id"] a');
    assert.equal(await owner.locator('.ref-name').innerText(), 'Grace Hopper');
    assert.equal(await owner.locator('.ref-id').innerText(), grace.id);
    const policyLink = row.locator('td[data-path="config.manager_settings.policy_id"] a');
    assert.equal(await policyLink.locator('.ref-name').innerText(), 'Balanced');
    assert.equal(await policyLink.getAttribute('href'), `#/entity/${policy.id}`);
    assert.equal(await page.locator(`td[data-path="owned_by_user_id"] a[data-ref="${ada.id}"]`, { hasText: 'Ada Lovelace' }).count(), 12);
    const headings = await page.locator('table.data thead th').allInnerTexts();
    for (const words of ['External id', 'Owner', 'Policy', 'Money type', 'Created', 'Last change']) {
      assert.ok(
        headings.some((text) => text.trim() === words),
        `${words} in ${headings.join(' | ')}`,
      );
    }
    assert.ok(!headings.some((text) => /_/.test(text)), headings.join(' | '));
    // Ordered by a reference field, newest owner first: Grace's portfolio, with its policy, leads.
    await page.locator('th[data-path="owned_by_user_id"] a').click();
    await page.locator('th[data-path="owned_by_user_id"][aria-sort="ascending"]').waitFor();
    await page.locator('th[data-path="owned_by_user_id"] a').click();
    await page.locator('th[data-path="owned_by_user_id"][aria-sort="descending"]').waitFor();
    assert.equal((await rowIds())[0], robo.id);
    await page.screenshot({ path: join(SCREENSHOTS, 'lists-search.png') });

    await owner.click();
    await page.getByRole('heading', { name: `Entity ${grace.id}` }).waitFor();
    await page.goBack();
    await page.locator(`tr[data-id="${robo.id}"] td[data-path="config.manager_settings.policy_id"] a`).click();
    await page.getByRole('heading', { name: `Entity ${policy.id}` }).waitFor();
    await page.goBack();
    await shows(1, 13, 13);
  });

  it('narrows the rows by quick filters and shows the query they make, which stays editable', async () => {
    // The filters write the filter part; the ordering chosen before stays.
    const order = ' orderby owned_by_user_id desc';
    await page.getByLabel('Money type').selectOption('PAPER_MONEY');
    await shows(1, 1, 1);
    assert.equal(await queryBox().inputValue(), `money_type eq 'PAPER_MONEY'${order}`);
    assert.deepEqual(await rowIds(), [robo.id]);

    await page.getByLabel('Money type').selectOption('');
    await page.getByLabel('Text', { exact: true }).fill('Pension 1');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    const textQuery = "(name eq '*Pension 1*' or external_id eq '*Pension 1*')";
    const expected = await answer(textQuery);
    assert.equal(expected.count, 3);
    await shows(1, 3, 3);
    assert.equal(await queryBox().inputValue(), textQuery + order);
    assert.deepEqual((await rowIds()).sort(), expected.results.map((r) => r.id).sort());

    await page.getByLabel('Status').selectOption('INACTIVE');
    await shows(1, 1, 1);
    assert.equal(await queryBox().inputValue(), `status eq 'INACTIVE' and ${textQuery}${order}`);
    assert.deepEqual(
      await rowIds(),
      (await answer(`status eq 'INACTIVE' and ${textQuery}${order}`)).results.map((r) => r.id),
    );

    // The operator edits the query the filters wrote: it runs as written and the filters no longer claim it.
    await queryBox().fill("external_id eq 'crm-0*'");
    await queryBox().press('Enter');
    await shows(1, 9, 9);
    assert.equal(await page.getByLabel('Status').inputValue(), '');
    assert.equal(await page.getByLabel('Text', { exact: true }).inputValue(), '');

    // Quotes and stars in the text are the text: the query stays one search of it, nothing else.
    await page.getByLabel('Text', { exact: true }).fill("x' or name neq '*");
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    const hostile = "(name eq '*x'' or name neq ''\\**' or external_id eq '*x'' or name neq ''\\**')";
    await page.getByText('No portfolios match this query.').waitFor();
    assert.equal(await queryBox().inputValue(), hostile);
    assert.equal(await page.locator('#query-error').isHidden(), true);
    assert.equal((await answer(hostile)).count, 0);
    assert.equal((await answer('')).count, 13);
  });

  it('orders the rows by a heading, then the other way round', async () => {
    await queryBox().fill("external_id eq 'crm-*'");
    await queryBox().press('Enter');
    await shows(1, 12, 12);
    await page.locator('th[data-path="name"] a').click();
    await page.locator('th[data-path="name"][aria-sort="ascending"]').waitFor();
    assert.equal(await queryBox().inputValue(), "external_id eq 'crm-*' orderby name");
    const ascending = (await answer("external_id eq 'crm-*' orderby name")).results.map((r) => r.id);
    assert.deepEqual(await rowIds(), ascending);

    await page.locator('th[data-path="name"] a').click();
    await page.locator('th[data-path="name"][aria-sort="descending"]').waitFor();
    assert.equal(await queryBox().inputValue(), "external_id eq 'crm-*' orderby name desc");
    assert.deepEqual(await rowIds(), [...ascending].reverse());
    const names = await page.locator('tbody td[data-path="name"]').allInnerTexts();
    assert.equal(names[0], 'Pension 12');
  });

  it('shows the chosen number of rows and pages forward and back', async () => {
    const query = "external_id eq 'crm-*' orderby name desc";
    await page.getByLabel('Rows per page').selectOption('10');
    await shows(1, 10, 12);
    const first = (await answer(query, 10, 0)).results.map((r) => r.id);
    assert.deepEqual(await rowIds(), first);
    assert.equal(await page.locator('.pager [aria-disabled="true"]', { hasText: 'Previous page' }).count(), 1);

    await page.getByRole('link', { name: 'Next page' }).click();
    await shows(11, 12, 12);
    assert.deepEqual(
      await rowIds(),
      (await answer(query, 10, 10)).results.map((r) => r.id),
    );
    assert.equal(await page.locator('.pager [aria-disabled="true"]', { hasText: 'Next page' }).count(), 1);
    assert.equal(await queryBox().inputValue(), query);

    await page.getByRole('link', { name: 'Previous page' }).click();
    await shows(1, 10, 12);
    assert.deepEqual(await rowIds(), first);

    // Another collection offers its own filters: users by status and text, no manager.
    await page.getByLabel('Collection').selectOption('users');
    assert.equal(await page.getByLabel('Manager').count(), 0);
    await page.getByLabel('Text', { exact: true }).fill('Love');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.locator('p.count', { hasText: '1–1 of 1 users' }).waitFor();
    assert.equal(await queryBox().inputValue(), "(first_name eq '*Love*' or last_name eq '*Love*' or email eq '*Love*' or external_id eq '*Love*')");
    assert.deepEqual(await rowIds(), [ada.id]);

    // Every collection's list, with the references it embeds, is answered (no problem shown).
    for (const key of ['policies', 'goals', 'horizons', 'risk-profiles', 'instrument_groups', 'profiles', 'questionnaires']) {
      await page.getByLabel('Collection').selectOption(key);
      await queryBox().fill('');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.waitForURL((url) => url.hash.includes(`c=${key}&`));
      await page.locator('.results p.count, .results p.state.empty, .results .problem').first().waitFor();
      assert.equal(await page.locator('.results .problem').count(), 0, `${key}: ${await page.locator('.results').innerText()}`);
      if (key === 'policies') assert.deepEqual(await rowIds(), [policy.id]);
    }
    assert.deepEqual(browser.pageErrors, []);
  });
});
