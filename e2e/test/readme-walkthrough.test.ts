import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { startSupervisor } from '@platform/dev-stack/supervisor';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureInstalled } from '@platform/dev-stack/os-packages';
import { freePort } from '@platform/dev-stack/ports';
import { exitOf } from '@platform/dev-stack/processes';
import { processesOf } from '@platform/dev-stack/process-list';

/**
 * The sections whose shell blocks run as one script, in this order, in one shell: the README's
 * taste, then the walk-through of docs/getting-started.md and the onboarding of docs/suitability.md
 * that continues in its shell. The pages are the script.
 */
const SECTIONS: [page: string, heading: string][] = [
  ['README.md', '## A taste'],
  ['docs/getting-started.md', '## A walk through with curl'],
  ['docs/suitability.md', '# Suitability assessments'],
];

/** The fenced shell blocks of one section of a page, up to the next heading of its level or above. */
function blocksOf(page: string, heading: string): string[] {
  const lines = readFileSync(page, 'utf8').split('\n');
  const start = lines.indexOf(heading);
  assert.ok(start >= 0, `${page} has a section "${heading}"`);
  const ends = new RegExp(`^#{1,${heading.indexOf(' ')}} `);
  const blocks: string[] = [];
  // Inside a fence: the shell block's lines so far, or null for a block of another language.
  let fence: string[] | null | undefined;
  for (const line of lines.slice(start + 1)) {
    if (fence !== undefined) {
      if (line === '```') {
        if (fence) blocks.push(fence.join('\n'));
        fence = undefined;
      } else fence?.push(line);
    } else if (line.startsWith('```')) fence = line === '```sh' || line === '```bash' ? [] : null;
    else if (ends.test(line)) break;
  }
  assert.ok(blocks.length > 0, `the section "${heading}" of ${page} has a shell block`);
  return blocks;
}

const walkthrough = (): string => SECTIONS.flatMap(([page, heading]) => blocksOf(page, heading)).join('\n');

/** bash with `set -euo pipefail` running `script` in the repository folder, as a user pastes it. */
function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return exitOf(child).then((exit) => ({ code: exit.code, output }));
}

describe('README taste and docs walk-through with curl', function () {
  this.timeout(300_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-walkthrough-'));
  let env: NodeJS.ProcessEnv;
  let platform: { child: ChildProcess; output: () => string } | undefined;

  before(async () => {
    for (const [binary, pkg] of [
      ['jq', 'jq'],
      ['curl', 'curl'],
    ])
      ensureInstalled(binary!, pkg!, (line) => console.log(line), 'to run the walk-through of docs/getting-started.md');
    env = { ...process.env, PLATFORM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    for (const name of ['MANAGEMENT_PORT', 'DATA_PORT', 'MANAGEMENT_METRICS_PORT', 'DATA_METRICS_PORT', 'PG_PORT', 'NATS_PORT', 'MQTT_PORT'])
      env[name] = String(await freePort());
    // What a user's shell would not have: the test harness's servers, URLs the walk-through honours.
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

  it('runs as pasted, twice in a row: the README taste, then logging in, refreshing, creating a user and a portfolio, reading an instrument of the sample universe, a robo-advised paper portfolio invested and paid out, and a customer onboarded by an assessment', async () => {
    const script = walkthrough();
    const runs: string[] = [];
    for (let run = 1; run <= 2; run++) {
      const { code, output } = await bash(script, env);
      assert.equal(code, 0, `run ${run} of the walk-through failed:\n${output}`);
      runs.push(output);
    }
    const tokens = /"access_token":"(eyJ[\w-]+\.[\w-]+\.[\w-]+)".*"refresh_token":"([\w-]+)"/g;
    const userIds: string[] = [];
    for (const output of runs) {
      // The README's taste: the deposit booked, then the portfolio's events read back in commit order.
      assert.match(output, /"type":"CASH","status":"SETTLED","quantity":"1000(\.00)?"/, `the taste's deposit:\n${output}`);
      assert.match(output, /^portfolios\.creation\nnotifications\.deposit-received$/m, `the taste's events:\n${output}`);
      const issued = [...output.matchAll(tokens)];
      assert.equal(issued.length, 2, `a login and a refresh, each with an access and a refresh token:\n${output}`);
      assert.notEqual(issued[0]![2], issued[1]![2], 'the refresh issued a new refresh token');
      assert.match(output, /"crv":"P-256"/, 'the JWKS');
      const user = /"id":"(U[0-9A-HJKMNP-TV-Z]{26})"/.exec(output);
      assert.ok(user, `a user id:\n${output}`);
      userIds.push(user[1]!);
      const portfolio = new RegExp(`"id":"(P[0-9A-HJKMNP-TV-Z]{26})".*"owned_by_user_id":"${user[1]}"`).exec(output);
      assert.ok(portfolio, `a portfolio of that user:\n${output}`);
      assert.ok(output.split(portfolio[1]!).length - 1 >= 2, 'the portfolio created and read back');
      const instrument =
        /\{"data":\{"([A-Z]{2}[A-Z0-9]{9}\d)":\{"name":"Sample [^"]+","asset_class":"[A-Z_]+","currency":"[A-Z]{3}","price":[\d.]+\}\},"meta":null\}/.exec(
          output,
        );
      assert.ok(instrument, `reference data of a sample instrument:\n${output}`);
      assert.match(output, /"VALUE_STARS": (null|[1-5]),\n\s*"MOMENTUM_STARS": (null|[1-5])/, `its X-Ray stars:\n${output}`);
      // The robo-advice part: the paper portfolio's orders executed, 2,000 paid out, two optimizations.
      assert.match(
        output,
        /"status": "SUCCESS",\n\s*"is_recommended": true,\n\s*"orders": \{\n\s*"[A-Z]{2}[A-Z0-9]{9}\d": \{\n\s*"shares": \d+/,
        `the first optimization's orders:\n${output}`,
      );
      assert.match(output, /\[\{"quantity":"-2000","status":"SETTLED"\}\]/, `the payout of 2,000:\n${output}`);
      assert.equal(
        [...output.matchAll(/"status":"SUCCESS","is_recommended":true,"execution_status":"EXECUTED"/g)].length,
        2,
        `both optimizations executed:\n${output}`,
      );
    }
    assert.notEqual(userIds[0], userIds[1], 'each run creates its own user');
    const credentials = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as {
      policies: Record<string, string>;
      risk_profiles: Record<string, string>;
    };
    for (const output of runs) {
      // The onboarding: the default questionnaire's sections, WAITING_FOR_POLICY, a refused answer,
      // score 56, the balanced risk profile with its policy (WAITING_FOR_FUNDS), found by the query, ACTIVE.
      assert.match(output, /\["knowledge","experience","financial_situation","goals","loss_tolerance"\]/, `the sections:\n${output}`);
      const onboarded = [...output.matchAll(/\{"onboarded":"([A-Z_]+)"/g)].map((m) => m[1]);
      assert.deepEqual(onboarded, ['WAITING_FOR_POLICY', 'WAITING_FOR_FUNDS', 'ACTIVE'], output);
      assert.match(output, /\{"status":422,"code":"validation_failed","loc":\["body","answers","annual_income"\]\}/, output);
      assert.match(output, /\{"status":"IN_PROGRESS","attempts":1,"questionnaire_version":1\}/, output);
      assert.match(output, /\{"status":"COMPLETED","score":56\}/, output);
      const settings =
        /"settings":\{"suitability_profile_id":"(N[0-9A-Z]{26})","risk_profile_id":"(K[0-9A-Z]{26})","risk_profile_score":40,"policy_id":"(Y[0-9A-Z]{26})"\}/.exec(
          output,
        );
      assert.ok(settings, `the portfolio's settings after the acceptance:\n${output}`);
      assert.deepEqual([settings[2], settings[3]], [credentials.risk_profiles.balanced, credentials.policies.balanced]);
      assert.match(output, /\{"status":"SETTLED","quantity":"5000(\.00)?"\}/, `the deposit:\n${output}`);
    }
  });

  // In the same npm start as the walk-through: the client package's quick start as clients/README.md shows it.
  it('runs the quick start of the client package (clients/examples/quick-start.ts)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'clients/examples/quick-start.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const exit = await exitOf(child);
    assert.equal(exit.code, 0, `the quick start failed:\n${output}`);
    const created = /^user (U[0-9A-Z]{26}) owns portfolio (P[0-9A-Z]{26}) \(ACTIVE\)$/m.exec(output);
    assert.ok(created, output);
    assert.match(output, new RegExp(`^found portfolio ${created[2]}$`, 'm'));
    assert.match(output, /^400 invalid_query at position \d+: Invalid query at position \d+: .* \(request [0-9A-Z]{26}\)$/m);
    assert.match(output, new RegExp(`^event portfolios\\.creation of ${created[2]}$`, 'm'));
    assert.match(output, /^next time, resume after cursor \d+-\d+$/m);
    assert.match(output, /^[A-Z]{2}[A-Z0-9]{9}\d: \{"name":"Sample [^"]+","currency":"[A-Z]{3}","price":[\d.]+\}$/m);
  });
});
