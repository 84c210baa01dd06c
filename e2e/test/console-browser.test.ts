import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { call } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';

// The administration console (docs/adr/0036-administration-console.md) in Debian's Chromium,
// against both real services: the console as the management service serves it, the data service
// reached across origins (docs/adr/0037-console-and-the-data-service.md). One browser and one
// platform for the file; the steps build on each other. Screenshots of each page go to
// .tmp/console-screenshots/ (docs/images/ keeps two of them for docs/console.md).
const SCREENSHOTS = new URL('../../.tmp/console-screenshots/', import.meta.url).pathname;
const CHROMIUM = process.env.TEST_CHROMIUM ?? '/usr/bin/chromium';
// Chromium as a test runs it: no sandbox (root in CI), no GPU, nothing fetched from the network.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
/** How long the page may take to show what a step waits for (the feed polls every 2 s). */
const WAIT_MS = 20_000;

describe('administration console in a browser', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let tenant: TestTenant;
  let token: string;
  let browser: BrowserContext;
  let page: Page;
  let profile: string;
  let portfolioId: string;
  let isin: string;
  const requested: string[] = [];
  const pageErrors: string[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await call(`${platform.managementUrl}${path}`, { method, body, token });
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

  before(async () => {
    platform = await startTestPlatform({}, { console: true });
    tenant = await platform.tenant();
    token = (await call(`${platform.managementUrl}/auth/login/`, { body: { access_key_id: tenant.accessKeyId, secret_access_key: tenant.secret } })).body
      .access_token;
    const universe = await call(`${platform.dataUrl}/data/reference/universe/?universe_name=ROBO&fields=PRICE`, {
      headers: { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey },
    });
    isin = Object.keys(universe.body.data)[0]!;
    // A portfolio with three versions: created, renamed, given holdings.
    const user = await api('POST', '/users/', { first_name: 'Ada', last_name: 'Lovelace' });
    const created = await api('POST', '/portfolios/', {
      name: 'Console Alpha',
      owned_by_user_id: user.id,
      base_currency: 'EUR',
      money_type: 'REAL_MONEY',
      config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
    });
    portfolioId = created.id;
    await api('PATCH', `/portfolios/${portfolioId}`, { name: 'Console Beta' });
    await api('PATCH', `/portfolios/${portfolioId}`, { portfolio: { $EUR: 1000, [isin]: 5 } });

    mkdirSync(SCREENSHOTS, { recursive: true });
    profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1366, height: 768 },
    });
    // The page's timers run on a clock the test can move forward (token renewal); time flows meanwhile.
    await browser.clock.install();
    page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(WAIT_MS);
    page.on('request', (request) => requested.push(request.url()));
    page.on('pageerror', (error) => pageErrors.push(error.message));
  });

  after(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await platform?.stop();
  });

  it('signs in with an access key and keeps the token out of storage and cookies', async () => {
    await page.goto(`${platform.managementUrl}/console/`);
    await page.getByLabel('Access key id').waitFor();
    await shot('sign-in');
    await page.getByLabel('Access key id').fill(tenant.accessKeyId);
    await page.getByLabel('Secret access key').fill('not the secret');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // A refused login shows the problem: its title, detail and request id.
    await page.locator('.problem .request-id').waitFor();
    assert.match(await page.locator('.problem-title').innerText(), /401/);
    await page.getByLabel('Secret access key').fill(tenant.secret);
    await page.getByLabel('Data API key (optional)').fill(tenant.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Search', exact: true }).waitFor();
    assert.match(await page.locator('.who').innerText(), new RegExp(tenant.tenantId));
    const kept = await page.evaluate(() => {
      const window = globalThis as any;
      return [window.localStorage.length, window.sessionStorage.length, window.document.cookie];
    });
    assert.deepEqual(kept, [0, 0, '']);
    assert.equal(await page.getByRole('link', { name: 'API reference' }).getAttribute('href'), '/docs/');
  });

  it('renews the access token with its refresh token before it expires', async () => {
    const renewal = page.waitForResponse((res) => res.url() === `${platform.managementUrl}/auth/refresh-token/`);
    // The 300 s token is renewed after 240 s.
    await page.clock.fastForward('04:10');
    assert.equal((await renewal).status(), 200);
    // Still signed in; the next step searches with the new token.
    assert.match(await page.locator('.who').innerText(), new RegExp(tenant.tenantId));
  });

  it('finds a portfolio by query and, one click on, shows who changed what and when', async () => {
    await page.getByLabel('Collection').selectOption('portfolios');
    await page.getByLabel('Query', { exact: true }).fill("name eq 'Console Be*'");
    await page.getByLabel('Query', { exact: true }).press('Enter');
    const row = page.locator(`tr[data-id="${portfolioId}"]`);
    await row.waitFor();
    assert.equal(await page.locator('table.data tbody tr').count(), 1);
    await shot('search');
    await row.getByRole('link', { name: portfolioId, exact: true }).click();

    const versions = page.locator('table.versions tbody tr');
    await page.getByRole('heading', { name: 'Versions', exact: true }).waitFor();
    assert.equal(await versions.count(), 3);
    const first = page.locator('table.versions tr[data-version="2"]');
    assert.match(await first.innerText(), /UTC/);
    assert.match(await first.innerText(), /machine client or the service/);
    assert.match(await first.innerText(), /\bname\b/);
    // By default the two newest versions: the holdings changed, the name did not.
    await page.locator(`table.diff-table tr.added[data-path="/portfolio/${isin}"]`).waitFor();
    assert.equal(await page.locator('table.diff-table tr[data-path="/name"]').count(), 0);

    await page.getByLabel('Compare from version 1', { exact: true }).check();
    await page.getByLabel('Compare to version 2', { exact: true }).check();
    const nameRow = page.locator('table.diff-table tr.changed[data-path="/name"]');
    await nameRow.waitFor();
    assert.match(await nameRow.innerText(), /"Console Alpha"\s+"Console Beta"/);
    assert.equal(await page.locator('table.diff-table tr[data-path^="/portfolio/"]').count(), 0);
    const highlighted = await page.locator('.diff pre.json .line.changed').evaluateAll((lines: any[]) => lines.map((line) => line.getAttribute('data-path')));
    assert.ok(highlighted.includes('/name'), highlighted.join(' '));
    assert.ok(!highlighted.includes('/base_currency'), highlighted.join(' '));
    const background = await page
      .locator('.diff pre.json .line.changed[data-path="/name"]')
      .evaluate((line: any) => (globalThis as any).getComputedStyle(line).backgroundColor);
    assert.notEqual(background, 'rgba(0, 0, 0, 0)', 'the changed line is highlighted');
    await shot('entity');
  });

  it('marks a parse error at the position the interface names', async () => {
    const query = "name eq 'Console' and statuss eq 'ACTIVE'";
    const answer = await call(`${platform.managementUrl}/portfolios/?query=${encodeURIComponent(query)}`, { token });
    assert.equal(answer.body.code, 'invalid_query');
    const position: number = answer.body.position;
    await page.getByRole('link', { name: 'Search', exact: true }).click();
    await page.getByLabel('Collection').selectOption('portfolios');
    await page.getByLabel('Query', { exact: true }).fill(query);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const mark = page.locator('#query-error mark');
    await mark.waitFor();
    assert.equal(await mark.getAttribute('data-position'), String(position));
    assert.equal(await mark.innerText(), query[position]);
    assert.match(await page.locator('#query-error').innerText(), new RegExp(`position ${position}\\b`));
    assert.equal(await page.getByLabel('Query', { exact: true }).getAttribute('aria-invalid'), 'true');
    assert.equal(await page.getByLabel('Query', { exact: true }).evaluate((input: any) => input.selectionStart), position);
    await shot('search-error');
    // An id pasted from elsewhere opens its entity.
    await page.getByLabel('Open an entity by id').fill('T01HZC48CNR9YNY5M4C8F5S2HT9');
    await page.getByLabel('Open an entity by id').press('Enter');
    await page.getByText("A transaction opens from its portfolio's page.").waitFor();
    await page.getByLabel('Open an entity by id').fill(portfolioId);
    await page.getByLabel('Open an entity by id').press('Enter');
    await page.getByRole('heading', { name: `Entity ${portfolioId}` }).waitFor();
  });

  it('shows an event in the live feed after a PATCH through the interface, reached by keyboard', async () => {
    // From the query box back through the header to the Events link, its focus visible.
    const focused = () =>
      page.evaluate(() => {
        const element = (globalThis as any).document.activeElement;
        return { text: element?.textContent as string, outline: (globalThis as any).getComputedStyle(element).outlineStyle as string };
      });
    for (let i = 0; i < 10 && (await focused()).text !== 'Events'; i++) await page.keyboard.press('Shift+Tab');
    assert.deepEqual(await focused(), { text: 'Events', outline: 'solid' });
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Events', exact: true }).waitFor();
    await page.getByLabel('Subject').selectOption('portfolios');
    await page.waitForFunction(() => /\d+ events? · checked/.test((globalThis as any).document.querySelector('.feed-state')?.textContent ?? ''));
    const statusUpdates = page.locator(`tr[data-entity-id="${portfolioId}"]`, { hasText: 'portfolios.status-update' });
    assert.equal(await statusUpdates.count(), 0);
    await api('PATCH', `/portfolios/${portfolioId}`, { archived: true });
    await statusUpdates.waitFor();
    assert.match(await statusUpdates.innerText(), /value: INACTIVE/);
    await shot('events');
  });

  it('shows the portfolio with its holdings valued at the data service prices, its transactions, optimizations and events', async () => {
    await page.goto(`${platform.managementUrl}/console/#/portfolio/${portfolioId}`);
    // A reload signs out: the token lived in the page only.
    await page.reload();
    await page.getByLabel('Access key id').fill(tenant.accessKeyId);
    await page.getByLabel('Secret access key').fill(tenant.secret);
    await page.getByLabel('Data API key (optional)').fill(tenant.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Portfolio Console Beta' }).waitFor();
    const holding = page.locator('table.holdings tbody tr', { hasText: isin });
    await holding.waitFor();
    const cells = await holding.locator('td').allInnerTexts();
    assert.ok(Number(cells[2]!.replace(/,/g, '')) > 0, `a price: ${cells.join(' | ')}`);
    assert.match(await page.locator('table.holdings tfoot').innerText(), /Total in EUR/);
    assert.match(await page.locator('.badge').first().innerText(), /INACTIVE/);
    await page.locator('section', { hasText: 'Transactions' }).locator('.state.empty, table').first().waitFor();
    await page.getByText('No optimizations yet.').waitFor();
    await page.locator('section', { hasText: 'Its events' }).getByText('portfolios.status-update').waitFor();
    await shot('portfolio');
  });

  it('draws the future-performance fan chart, reference data and X-Ray stars from the data service', async () => {
    await page.getByRole('link', { name: 'Data', exact: true }).click();
    await page.getByLabel('Scenarios', { exact: true }).fill('500');
    await page.getByRole('button', { name: 'Simulate' }).click();
    await page.locator('svg.fan-chart path.deposits').waitFor();
    await page.locator('section', { hasText: 'Future performance' }).screenshot({ path: join(SCREENSHOTS, 'data-fan-chart.png') });
    assert.equal(await page.locator('svg.fan-chart path.band').count(), 2);
    assert.equal(await page.locator('svg.fan-chart path.median').count(), 1);
    // Ten years sampled monthly (and the end date): about 121 points on the deposits line, rising.
    const deposits = (await page.locator('svg.fan-chart path.deposits').getAttribute('d'))!;
    const ys = [...deposits.matchAll(/[ML][\d.]+,([\d.]+)/g)].map((m) => Number(m[1]));
    assert.ok(ys.length >= 121 && ys.length <= 122, `${ys.length} points`);
    assert.ok(ys[ys.length - 1]! < ys[0]!, 'the deposits line rises (SVG y grows downwards)');

    await page.getByRole('button', { name: 'Take 10 ISINs of this universe' }).click();
    await page.waitForFunction(() => (globalThis as any).document.getElementById('isins')?.value.includes('\n') === true);
    await page.getByRole('button', { name: 'Query reference data' }).click();
    await page.locator('table.reference tbody tr').first().waitFor();
    assert.equal(await page.locator('table.reference tbody tr').count(), 10);

    await page.getByRole('button', { name: 'Show X-Ray stars' }).click();
    await page.locator('table.xray tbody tr').first().waitFor();
    assert.match(await page.locator('table.xray .stars').first().getAttribute('aria-label').then(String), /^[1-5] of 5 stars$/);
    await shot('data');
  });

  it('ends the session and says so when its token can no longer be renewed (the access key revoked)', async () => {
    await promisify(execFile)(process.execPath, ['--import', 'tsx', 'cli/src/main.ts', 'access-key', 'revoke', tenant.accessKeyId], {
      env: { ...process.env, DATABASE_URL: platform.database.url },
    });
    const renewal = page.waitForResponse((res) => res.url() === `${platform.managementUrl}/auth/refresh-token/`);
    await page.clock.fastForward('04:10');
    assert.equal((await renewal).status(), 401);
    await page.getByText('Your session ended (its token could not be renewed): sign in again.').waitFor();
    await page.getByLabel('Access key id').waitFor();
    assert.equal(await page.locator('.who').count(), 0);
  });

  it('shows the API reference of both services, linked from the console, with nothing fetched elsewhere', async () => {
    const docs = await browser.newPage();
    const elsewhere: string[] = [];
    const errors: string[] = [];
    docs.on('requestfinished', (request) => {
      // Redoc's search runs in a worker loaded from a blob: of the page's own origin.
      const url = request.url();
      if (!url.startsWith('data:') && new URL(url).origin !== platform.managementUrl) elsewhere.push(url);
    });
    docs.on('pageerror', (error) => errors.push(error.message));
    try {
      await docs.goto(`${platform.managementUrl}/docs/`);
      await docs
        .getByRole('link', { name: /management/i })
        .first()
        .click();
      await docs.getByRole('heading', { name: 'Log in with an access key' }).waitFor();
      await docs.screenshot({ path: join(SCREENSHOTS, 'api-reference.png') });
      await docs.goto(`${platform.managementUrl}/docs/data`);
      await docs.getByRole('heading', { name: 'Reference data of given instruments' }).waitFor();
    } finally {
      await docs.close();
    }
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(errors, []);
  });

  it('loaded nothing but from the two services, and threw no error', () => {
    const foreign = requested.filter(
      (url) => !url.startsWith(`${platform.managementUrl}/`) && !url.startsWith(`${platform.dataUrl}/`) && !url.startsWith('data:'),
    );
    assert.deepEqual(foreign, []);
    assert.ok(
      requested.some((url) => url.startsWith(`${platform.dataUrl}/`)),
      'the data service was called across origins',
    );
    assert.deepEqual(pageErrors, []);
  });
});
