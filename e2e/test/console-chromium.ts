import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { TestTenant } from '@platform/test-support/platform';

// Debian's Chromium as the console's browser tests run it (docs/adr/0038-browser-tests.md), for a
// test file that starts one browser of its own.

/** Where every run leaves its screenshots (not committed). */
export const SCREENSHOTS = new URL('../../.tmp/console-screenshots/', import.meta.url).pathname;
const CHROMIUM = process.env.TEST_CHROMIUM ?? '/usr/bin/chromium';
// No sandbox (root in CI), no GPU, nothing fetched from the network.
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
/** How long the page may take to show what a step waits for. */
const WAIT_MS = 20_000;

export type ConsoleBrowser = { page: Page; pageErrors: string[]; close: () => Promise<void> };

/** Chromium, headless at 1366×768 with a fresh profile, its page's script errors collected. */
export async function openBrowser(): Promise<ConsoleBrowser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
  let browser: BrowserContext;
  try {
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1366, height: 768 },
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(WAIT_MS);
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return {
    page,
    pageErrors,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Signs in to the console served at `managementUrl` with the tenant's access key, and waits for the search page. */
export async function signIn(page: Page, managementUrl: string, tenant: TestTenant): Promise<void> {
  await page.goto(`${managementUrl}/console/`);
  await page.getByLabel('Access key id').fill(tenant.accessKeyId);
  await page.getByLabel('Secret access key').fill(tenant.secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Search', exact: true }).waitFor();
}
