import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import knex from 'knex';
import pg from 'pg';
import { freePort } from '@platform/dev-stack/ports';
import { createTestDatabase, type TestDatabase } from '@platform/test-support/database';
import { isUnavailable, unavailableProblem } from '../src/unavailable.ts';

/** The error a promise rejects with (the test fails when it resolves). */
async function errorOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('unavailable: which database errors are a 503', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database?.drop());

  it('a refused connection (nobody listens on the port)', async () => {
    const url = new URL(database.url);
    url.port = String(await freePort());
    const client = new pg.Client({ connectionString: url.toString() });
    const error = await errorOf(client.connect());
    assert.equal((error as { code?: string }).code, 'ECONNREFUSED');
    assert.ok(isUnavailable(error));
    const problem = unavailableProblem(error)!;
    assert.equal(problem.status, 503);
    assert.equal(problem.code, 'unavailable');
    assert.deepEqual(problem.extra.headers, { 'Retry-After': '5' });
  });

  it('a connection the server ends under a running statement (57P01 admin shutdown), and the dead connection afterwards', async () => {
    const client = new pg.Client({ connectionString: database.url });
    client.on('error', () => undefined);
    await client.connect();
    const { rows } = await client.query('select pg_backend_pid() as pid');
    const running = errorOf(client.query('select pg_sleep(20)'));
    await new Promise((r) => setTimeout(r, 200));
    await database.db.raw('select pg_terminate_backend(?)', [rows[0].pid]);
    const error = await running;
    assert.equal((error as { code?: string }).code, '57P01');
    assert.ok(isUnavailable(error));
    const after = await errorOf(client.query('select 1'));
    assert.ok(isUnavailable(after), String(after));
  });

  it("a connection cut while BEGIN or a statement waits for its answer: knex puts the statement in front of node-postgres's message", async () => {
    // A proxy in front of Postgres that can hold what the client sends and cut its sockets, as when
    // the server's processes are killed while a request's statement is on its way.
    const sockets = new Set<Socket>();
    let held: (() => void) | undefined;
    const proxy = createServer((client) => {
      const upstream = connect(Number(new URL(database.url).port), '127.0.0.1');
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sockets.delete(s));
      }
      client.on('data', (chunk) => (held ? held() : upstream.write(chunk)));
      upstream.pipe(client);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const url = new URL(database.url);
    url.port = String((proxy.address() as AddressInfo).port);
    const db = knex({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 1 } });
    /** The error of `work` when the sockets are cut once its first bytes reached the proxy. */
    const cutUnder = async (work: () => Promise<unknown>) => {
      await db.raw('select 1'); // a connection in the pool, so that what follows is the statement itself
      const arrived = new Promise<void>((r) => (held = r));
      const failing = errorOf(work());
      await arrived;
      for (const s of sockets) s.destroy();
      held = undefined;
      return (await failing) as Error;
    };
    try {
      const begin = await cutUnder(() => db.transaction((trx) => trx.raw('select 1')));
      assert.equal(begin.message, 'BEGIN; - Connection terminated unexpectedly');
      const statement = await cutUnder(() => db.raw('select 2'));
      assert.equal(statement.message, 'select 2 - Connection terminated unexpectedly');
      for (const error of [begin, statement]) {
        assert.ok(isUnavailable(error), error.message);
        assert.equal(unavailableProblem(error)?.status, 503);
      }
    } finally {
      await db.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });

  it("knex's statement in front of node-postgres's messages, and no value of a statement taken for them", () => {
    for (const message of [
      'BEGIN; - Connection terminated unexpectedly',
      'ROLLBACK - Connection terminated unexpectedly',
      'select 1 - Client has encountered a connection error and is not queryable',
    ]) {
      assert.ok(isUnavailable(new Error(message)), message);
    }
    for (const message of [
      'select $1::numeric - invalid input syntax for type numeric: "x - Connection terminated unexpectedly"',
      'insert into t values ($1) - duplicate key value violates unique constraint "t_pkey"',
      'Connection was terminated by the request',
    ]) {
      assert.equal(isUnavailable(new Error(message)), false, message);
    }
  });

  it("knex's time-out waiting for a connection of a full pool", async () => {
    const db = knex({ client: 'pg', connection: database.url, pool: { min: 0, max: 1 }, acquireConnectionTimeout: 200 });
    try {
      const trx = await db.transaction();
      const error = await errorOf(db.raw('select 1'));
      await trx.rollback();
      assert.equal((error as Error).name, 'KnexTimeoutError');
      assert.ok(isUnavailable(error));
    } finally {
      await db.destroy();
    }
  });

  it('not the errors of a request: bad SQL, a value Postgres refuses, a unique violation, a plain Error', async () => {
    const db = database.db;
    await db.raw('create table unavailable_t (k text primary key)');
    await db.raw("insert into unavailable_t values ('a')");
    for (const work of [
      db.raw('selec 1'),
      db.raw('select ?::numeric', ['1e999999']),
      db.raw('select ?::text', ['a\u0000']),
      db.raw("insert into unavailable_t values ('a')"),
    ]) {
      const error = await errorOf(work);
      assert.equal(isUnavailable(error), false, String(error));
      assert.equal(unavailableProblem(error), undefined);
    }
    assert.equal(isUnavailable(new Error('boom')), false);
    assert.equal(isUnavailable(undefined), false);
  });
});
