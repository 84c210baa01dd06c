import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { startSupervisor } from '@platform/dev-stack/supervisor';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureInstalled } from '@platform/dev-stack/os-packages';
import { freePort } from '@platform/dev-stack/ports';
import { exitOf } from '@platform/dev-stack/processes';
import { processesOf } from '@platform/dev-stack/process-list';
import { markerProblems, missingExpects, shellBlocksOf, whereIs, type ShellBlock } from '../src/doc-blocks.ts';

/**
 * Every page with a shell block, in the order its blocks run in one shell, as a reader pastes them
 * (docs/adr/0055-documentation-pages.md). `again`: its blocks run a second time, in a new shell,
 * after the first pass; the pages that create a named tenant run once (a second `tenant create` of
 * the same id is refused, as it should be).
 */
const PAGES: { page: string; again: boolean }[] = [
  { page: 'README.md', again: true },
  { page: 'docs/getting-started.md', again: true },
  { page: 'docs/robo-advice.md', again: true },
  { page: 'docs/suitability.md', again: true },
  { page: 'docs/funding.md', again: true },
  { page: 'docs/data-interface.md', again: true },
  { page: 'docs/management-interface.md', again: false },
  { page: 'docs/operations.md', again: false },
  { page: 'docs/events.md', again: false },
];

/** The README and every Markdown page under docs/, records and profiles included. */
function markdownPages(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? under(join(dir, entry.name)) : entry.name.endsWith('.md') ? [join(dir, entry.name)] : [],
    );
  return ['README.md', ...under('docs')].sort();
}

const blocksOf = (page: string): ShellBlock[] => shellBlocksOf(page, readFileSync(page, 'utf8'));

const MARK = (n: number | 'end') => `@@@ block ${n} @@@`;

/**
 * One bash script of `blocks`, each announced by a line of its own so that the output can be cut
 * into each block's share; stderr joins stdout to keep their order.
 */
const scriptOf = (blocks: ShellBlock[]): string =>
  ['exec 2>&1', ...blocks.flatMap((block, n) => [`printf '\\n%s\\n' '${MARK(n)}'`, block.script]), `printf '\\n%s\\n' '${MARK('end')}'`].join('\n');

/** bash with `set -euo pipefail` running `script` in the repository folder, as a user pastes it. */
function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // Decoded as a stream: a character of several bytes may straddle two chunks.
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  return exitOf(child).then((exit) => ({ code: exit.code, output }));
}

const tail = (output: string, lines = 40): string => output.trimEnd().split('\n').slice(-lines).join('\n');

/**
 * Runs `blocks` in one shell; fails naming the block that exited non-zero or missed an expected
 * line, with the tail of its output. Returns each block's output.
 */
async function runBlocks(blocks: ShellBlock[], env: NodeJS.ProcessEnv, pass: string): Promise<Map<ShellBlock, string>> {
  const { code, output } = await bash(scriptOf(blocks), env);
  const parts = output.split(/\n@@@ block (\d+|end) @@@\n/);
  const outputs = new Map<ShellBlock, string>();
  let last = -1;
  for (let i = 1; i < parts.length; i += 2) {
    if (parts[i] === 'end') break;
    last = Number(parts[i]);
    outputs.set(blocks[last]!, parts[i + 1] ?? '');
  }
  if (code !== 0) {
    const failed = blocks[last];
    assert.fail(
      failed
        ? `${pass}: the block at ${whereIs(failed)} exited with ${code}; its output ends:\n${tail(outputs.get(failed)!)}`
        : `${pass}: bash exited with ${code} before the first block:\n${tail(output)}`,
    );
  }
  assert.ok(parts.includes('end'), `${pass}: the script ended early:\n${tail(output)}`);
  for (const block of blocks) {
    const missing = missingExpects(block, outputs.get(block)!);
    assert.deepEqual(
      missing,
      [],
      `${pass}: the block at ${whereIs(block)} did not print ${JSON.stringify(missing)}; its output ends:\n${tail(outputs.get(block)!)}`,
    );
  }
  return outputs;
}

describe('shell blocks of the README and docs/: the list of pages and the markers', () => {
  it('names every page that has a shell block, and only those', () => {
    const withBlocks = markdownPages().filter((page) => blocksOf(page).length > 0);
    const listed = PAGES.map(({ page }) => page);
    assert.deepEqual(
      withBlocks.filter((page) => !listed.includes(page)),
      [],
      'pages with shell blocks missing from PAGES of e2e/test/runnable-docs.test.ts',
    );
    assert.deepEqual(
      listed.filter((page) => !withBlocks.includes(page)),
      [],
      'pages in PAGES without a shell block',
    );
  });

  it('gives every block that does not run a reason, expects only of blocks that run, and uses no jq nor a fixed port', () => {
    const blocks = PAGES.flatMap(({ page }) => blocksOf(page));
    assert.deepEqual(markerProblems(blocks), []);
    const run = blocks.filter((block) => block.notRun === null);
    assert.ok(run.length >= 10, `most blocks run (${run.length} of ${blocks.length})`);
    // Not installed on a fresh machine: the helpers of docs/getting-started.md read JSON with node.
    assert.deepEqual(blocks.filter((block) => /(^|[\s|(`])jq\s/m.test(block.script)).map(whereIs), [], 'blocks that call jq');
    // Ports are free ports in the test and may be moved by a reader: URLs come from credentials.json.
    assert.deepEqual(
      run.filter((block) => /(localhost|127\.0\.0\.1):\d+|:(8080|8081|1883|4222|5432)\b/.test(block.script)).map(whereIs),
      [],
      'blocks that run with a fixed port',
    );
  });
});

describe('every shell block of the README and docs/, run as pasted against npm start', function () {
  this.timeout(400_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-docs-'));
  let env: NodeJS.ProcessEnv;
  let platform: { child: ChildProcess; output: () => string } | undefined;
  const gitStatus = () => execFileSync('git', ['status', '--porcelain'], { encoding: 'utf8' });
  let statusBefore: string;

  before(async () => {
    ensureInstalled('curl', 'curl', (line) => console.log(line), 'to run the shell blocks of the README and docs/');
    statusBefore = gitStatus();
    env = { ...process.env, PLATFORM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    for (const name of ['MANAGEMENT_PORT', 'DATA_PORT', 'MANAGEMENT_METRICS_PORT', 'DATA_METRICS_PORT', 'PG_PORT', 'NATS_PORT', 'MQTT_PORT'])
      env[name] = String(await freePort());
    // What a user's shell would not have: the test harness's servers and URLs.
    for (const name of ['DATABASE_URL', 'NATS_URL', 'MANAGEMENT_URL', 'DATA_URL']) delete env[name];
    platform = await startSupervisor(env);
  });
  after(async () => {
    if (platform && platform.child.exitCode === null) {
      const exited = exitOf(platform.child);
      platform.child.kill('SIGINT');
      await exited;
    }
    for (const left of processesOf(dataDir)) process.kill(left.pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs every block not marked "not run" in page order, then the repeatable pages again in a new shell, each printing what it expects and writing nothing into the working tree', async () => {
    const blocks = PAGES.flatMap(({ page }) => blocksOf(page)).filter((block) => block.notRun === null);
    const first = await runBlocks(blocks, env, 'first pass');
    const again = blocks.filter((block) => PAGES.find(({ page }) => page === block.page)!.again);
    const second = await runBlocks(again, env, 'second pass');
    assert.equal(gitStatus(), statusBefore, 'the blocks wrote into the working tree');
    const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const users = [assertContents(first, 'first pass', credentials), assertContents(second, 'second pass', credentials)];
    assert.notEqual(users[0], users[1], 'each pass creates its own user');
  });
});

/** The output of the `n`th block (counted from 0, run or not) of `page`. */
function outputOf(outputs: Map<ShellBlock, string>, page: string, n: number): string {
  const block = blocksOf(page)[n]!;
  const found = [...outputs].find(([run]) => run.page === page && run.line === block.line);
  assert.ok(found, `the block at ${whereIs(block)} ran`);
  return found[1];
}

const ID = (letter: string) => `${letter}[0-9A-HJKMNP-TV-Z]{26}`;

/**
 * What the walk-through's blocks show beyond their `# expect:` lines: ids of this run carried from
 * block to block, the demo tenant's own policy and risk profile. Returns the user the pass created.
 */
function assertContents(outputs: Map<ShellBlock, string>, pass: string, credentials: Credentials): string {
  const taste = outputOf(outputs, 'README.md', 1);
  assert.match(taste, /"type":"CASH","status":"SETTLED","quantity":"1000(\.00)?"/, `${pass}: the taste's deposit:\n${taste}`);
  assert.match(taste, /^portfolios\.creation\nnotifications\.deposit-received$/m, `${pass}: the taste's events in commit order:\n${taste}`);

  const walk = outputOf(outputs, 'docs/getting-started.md', 0);
  const issued = [...walk.matchAll(/"access_token":"(eyJ[\w-]+\.[\w-]+\.[\w-]+)".*"refresh_token":"([\w-]+)"/g)];
  assert.equal(issued.length, 2, `${pass}: a login and a refresh, each with an access and a refresh token:\n${walk}`);
  assert.notEqual(issued[0]![2], issued[1]![2], 'the refresh issued a new refresh token');
  const user = new RegExp(`"id":"(${ID('U')})"`).exec(walk);
  assert.ok(user, `${pass}: a user id:\n${walk}`);
  const portfolio = new RegExp(`"id":"(${ID('P')})".*"owned_by_user_id":"${user[1]}"`).exec(walk);
  assert.ok(portfolio, `${pass}: a portfolio of that user:\n${walk}`);
  assert.ok(walk.split(portfolio[1]!).length - 1 >= 2, 'the portfolio created and read back');
  const instrument =
    /^\{"data":\{"([A-Z]{2}[A-Z0-9]{9}\d)":\{"name":"Sample [^"]+","asset_class":"[A-Z_]+","currency":"[A-Z]{3}","price":[\d.]+\}\},"meta":null\}$/m.exec(walk);
  assert.ok(instrument, `${pass}: reference data of a sample instrument:\n${walk}`);
  assert.match(walk, /^\{"VALUE_STARS":(null|[1-5]),"MOMENTUM_STARS":(null|[1-5])\}$/m, `${pass}: its X-Ray stars:\n${walk}`);

  const robo = outputOf(outputs, 'docs/getting-started.md', 1);
  assert.match(
    robo,
    /^\{"status":"SUCCESS","is_recommended":true,"orders":\{"[A-Z]{2}[A-Z0-9]{9}\d":\{"shares":\d+/m,
    `${pass}: the first optimization's orders:\n${robo}`,
  );
  const optimizations = /^\[(\{"id":"O[0-9A-Z]{26}","status":"SUCCESS","is_recommended":true,"execution_status":"EXECUTED"\},?){2}\]$/m;
  assert.match(robo, optimizations, `${pass}: both optimizations executed:\n${robo}`);

  const quickStart = outputOf(outputs, 'docs/getting-started.md', 2);
  const created = /^user (U[0-9A-Z]{26}) owns portfolio (P[0-9A-Z]{26}) \(ACTIVE\)$/m.exec(quickStart);
  assert.ok(created, `${pass}: the client's quick start:\n${quickStart}`);
  assert.match(quickStart, new RegExp(`^found portfolio ${created[2]}$`, 'm'));
  assert.match(quickStart, /^400 invalid_query at position \d+: Invalid query at position \d+: .* \(request [0-9A-Z]{26}\)$/m);
  assert.match(quickStart, new RegExp(`^event portfolios\\.creation of ${created[2]}$`, 'm'));
  assert.match(quickStart, /^[A-Z]{2}[A-Z0-9]{9}\d: \{"name":"Sample [^"]+","currency":"[A-Z]{3}","price":[\d.]+\}$/m);

  // The onboarding: WAITING_FOR_POLICY, then the balanced risk profile and its policy (score 56).
  const onboarding = outputOf(outputs, 'docs/suitability.md', 0);
  const onboarded = [...onboarding.matchAll(/\{"onboarded":"([A-Z_]+)"/g)].map((m) => m[1]);
  assert.deepEqual(onboarded, ['WAITING_FOR_POLICY', 'WAITING_FOR_FUNDS', 'ACTIVE'], onboarding);
  const settings = new RegExp(
    `"settings":\\{"suitability_profile_id":"(${ID('N')})","risk_profile_id":"(${ID('K')})","risk_profile_score":40,"policy_id":"(${ID('Y')})"\\}`,
  ).exec(onboarding);
  assert.ok(settings, `${pass}: the portfolio's settings after the acceptance:\n${onboarding}`);
  assert.deepEqual([settings[2], settings[3]], [credentials.risk_profiles.balanced, credentials.policies.balanced]);
  assert.match(onboarding, /\{"status":"SETTLED","quantity":"5000(\.00)?"\}/, `${pass}: the deposit:\n${onboarding}`);
  return user[1]!;
}

interface Credentials {
  policies: Record<string, string>;
  risk_profiles: Record<string, string>;
}
