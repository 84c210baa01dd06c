import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import winston from 'winston';
import { createLogger, newUlid } from '@platform/shared';
import { eventsSettled } from '@platform/test-support/database';
import { build, machineApi, personalUser, userApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { dumpRows, scanColumns, scanDump, scanLines, scanStreams } from '../src/personal-data-scan.ts';

// After an erasure, the person is looked for everywhere (docs/adr/0059-personal-data-erasure.md):
// every text and JSON column of every table, every row of every table as text, every message kept
// in JetStream, every log line both services wrote during the run, and a pg_dump where one of the
// server's version is installed. Nothing of the erased user may be found; another user's data is.

/** The server's major version, and pg_dump's on this machine (none when it is not installed). */
function pgDumpFor(serverMajor: number): string | undefined {
  try {
    const version = execFileSync('pg_dump', ['--version']).toString();
    const major = Number(/(\d+)\.\d+/.exec(version)?.[1]);
    return major >= serverMajor ? 'pg_dump' : undefined;
  } catch {
    return undefined;
  }
}

describe('an erased user is found nowhere (docs/adr/0059-personal-data-erasure.md)', function () {
  this.timeout(180_000);
  let platform: TestPlatform;
  let api: Api;
  const chunks: string[] = [];

  before(async () => {
    // Every line both services write, at every level.
    const logger = createLogger('test', 'debug');
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
    logger.clear().add(new winston.transports.Stream({ stream }));
    platform = await startTestPlatform({}, { logger, ownNats: true });
    api = await machineApi(platform, await platform.tenant());
  });
  after(() => platform?.stop());

  it('leaves no value of the erased user in any table, dump, stream or log line, and the other user whole', async () => {
    const erased = personalUser('DE89370400440532013000');
    const kept = personalUser('GB82WEST12345698765432');
    const ids: string[] = [];
    for (const { body } of [erased, kept]) {
      const created = await api('POST', '/users/', body, { 'idempotency-key': `user-${newUlid()}` });
      assert.equal(created.status, 201, created.text);
      ids.push(created.body.id);
      const id = created.body.id as string;
      assert.equal((await api('PATCH', `/users/${id}`, { first_name: `${body.first_name}-renamed`, language: 'de-DE' })).status, 200);
      // A portfolio with events on the stream, funded and emptied again; the owner reads it with a token of their own.
      const portfolio = await api('POST', '/portfolios/', build.portfolio(id, { external_id: `pf-${newUlid()}` }), { 'idempotency-key': `pf-${newUlid()}` });
      assert.equal(portfolio.status, 201, portfolio.text);
      for (const cash of [250, 0]) assert.equal((await api('PATCH', `/portfolios/${portfolio.body.id}`, { portfolio: { $EUR: cash } })).status, 200);
      assert.equal((await (await userApi(platform, api, id))('GET', `/portfolios/${portfolio.body.id}`)).status, 200);
    }
    const res = await api('POST', `/users/${ids[0]}/erasure/`);
    assert.equal(res.status, 200, res.text);
    await eventsSettled(platform.database.db);

    const db = platform.database.db;
    assert.deepEqual(await scanColumns(db, erased.needles), [], 'a column still holds the erased user');
    const keptFound = await scanColumns(db, kept.needles);
    assert.ok(
      kept.needles.every((needle) => keptFound.some((f) => f.needle === needle)),
      `the scan finds the other user's values: ${JSON.stringify(keptFound)}`,
    );

    const dump = await dumpRows(db);
    assert.ok((dump.get('public.entity_versions') ?? '').includes(kept.body.email), 'the dump holds the other user');
    assert.deepEqual(scanDump(dump, erased.needles), [], 'a row still holds the erased user');

    const server = Number(((await db.raw('show server_version_num')) as { rows: { server_version_num: string }[] }).rows[0]!.server_version_num) / 10_000;
    const pgDump = pgDumpFor(Math.floor(server));
    if (pgDump) {
      const text = execFileSync(pgDump, ['--dbname', platform.database.url], { maxBuffer: 1 << 28 }).toString();
      assert.ok(text.includes(kept.body.email));
      assert.deepEqual(scanDump(new Map([['pg_dump', text]]), erased.needles), []);
    }

    const { findings, messages } = await scanStreams(platform.natsUrl, [...erased.needles, ...kept.needles]);
    assert.ok(messages >= 2, `the streams hold the run's events, a creation per portfolio (${messages})`);
    assert.deepEqual(findings, [], 'no event carries a personal field, of either user');

    await new Promise((r) => setImmediate(r));
    const lines = chunks.join('').split('\n').filter(Boolean);
    assert.ok(
      lines.some((line) => line.includes(`/users/${ids[0]}/erasure/`)),
      'the log holds the run',
    );
    assert.deepEqual(scanLines(lines, [...erased.needles, ...kept.needles]), [], 'no log line carries a personal field, of either user');
  });
});
