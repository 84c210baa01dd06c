import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@platform/shared';
import { freePort, portAnswers } from '@platform/dev-stack/ports';
import { startStack } from '@platform/dev-stack/stack';

// The reference file `npm test` generated, so that the data service starts without making one.
const referenceDir = () => {
  const work = process.env.TEST_WORK_DIR;
  if (!work) throw new Error('TEST_WORK_DIR is not set: run the tests with `npm test`');
  return join(work, 'reference');
};

describe('dev stack: startStack', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'dev-stack-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const components = async () => ({ pgPort: await freePort(), natsPort: await freePort() });

  it('starts Postgres, a migrated database, NATS and both services, each ready; stop() ends every one of them', async () => {
    const { pgPort, natsPort } = await components();
    const stack = await startStack({
      log: () => undefined,
      postgres: { embedded: { dir: join(dir, 'pg'), port: pgPort, persistent: false } },
      database: { name: 'platform' },
      migrate: true,
      nats: { own: { dir: join(dir, 'nats'), port: natsPort, name: 'dev-stack-test' } },
      services: {
        run: 'in-process',
        logger: createLogger('test', 'error'),
        management: {},
        data: { env: { DUCKDB_PATH: join(dir, 'data.duckdb'), REFERENCE_DIR: referenceDir(), OPTIMIZER: 'false' } },
      },
    });
    try {
      assert.match(stack.databaseUrl, /\/platform$/);
      const { rows } = await stack.db.raw(
        `select count(*)::int as n from information_schema.tables where table_name in ('tenants', 'outbox', 'data_universes')`,
      );
      assert.equal(rows[0].n, 3, 'the three migrations folders applied');
      for (const url of [stack.managementUrl, stack.dataUrl]) assert.equal((await fetch(`${url}/readyz`)).status, 200, `${url} ready`);
      assert.notEqual(stack.serviceNatsUrls.management, stack.serviceNatsUrls.data, 'each service logs in as itself');
    } finally {
      await stack.stop();
    }
    await assert.rejects(fetch(`${stack.managementUrl}/readyz`), 'the management service stopped');
    assert.equal(await portAnswers(pgPort), false, 'Postgres stopped');
    assert.equal(await portAnswers(natsPort), false, 'nats-server stopped');
    await stack.stop(); // a second stop changes nothing
  });

  it('refuses services without NATS, and leaves nothing it started running', async () => {
    const { pgPort } = await components();
    await assert.rejects(
      startStack({
        log: () => undefined,
        postgres: { embedded: { dir: join(dir, 'pg'), port: pgPort, persistent: false } },
        services: { run: 'in-process', logger: createLogger('test', 'error'), management: {} },
      }),
      /the services need NATS/,
    );
    assert.equal(await portAnswers(pgPort), false, 'the Postgres it had started is stopped');
  });

  it('stops what it started when a service cannot start, and says why', async () => {
    const { pgPort, natsPort } = await components();
    await assert.rejects(
      startStack({
        log: () => undefined,
        postgres: { embedded: { dir: join(dir, 'pg'), port: pgPort, persistent: false } },
        migrate: true,
        nats: { own: { dir: join(dir, 'nats'), port: natsPort, name: 'dev-stack-test' } },
        services: { run: 'in-process', logger: createLogger('test', 'error'), management: { env: { JWT_PRIVATE_KEY: 'not a key' } } },
      }),
      /JWT_PRIVATE_KEY/,
    );
    assert.equal(await portAnswers(pgPort), false, 'Postgres stopped');
    assert.equal(await portAnswers(natsPort), false, 'nats-server stopped');
  });
});
