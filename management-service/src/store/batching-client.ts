import { createRequire } from 'node:module';
import pg from 'pg';
import { countRoundTrip } from '@platform/shared';

/**
 * A Postgres connection that sends what can go together in one round trip (docs/adr/0031-http-hot-path.md):
 * a transaction's BEGIN, and statements whose answer nobody waits for, leave with the next
 * statement; a read session's tenant scope goes in front of every statement. Such a group is
 * written at once with one Sync (extended protocol), so the server runs it in order as one unit
 * and answers once; an error stops the rest of the group.
 */

export type Statement = { text: string; values?: unknown[]; rowMode?: string; types?: unknown; name?: string };

/**
 * How many statement texts one connection keeps prepared under a name (parsed and planned once,
 * then only bound and run); texts beyond it go unnamed, as before. The service's hot statements
 * are a few dozen texts; the cap bounds texts that vary (an `in` list of each length).
 */
export const PREPARED_PER_CONNECTION = 256;

/**
 * A statement sent ahead of others; `check` may refuse its answer, which then fails the transaction. `translate` may
 * name what a failure of its group means (a unique violation of a deferred insert: a domain error); the group's
 * statement then fails with a DeferredFailure carrying it.
 */
export type Ahead = Statement & { check?: (result: pg.QueryResult) => Error | undefined; translate?: (error: Error) => Error | undefined };

/**
 * A group with a statement sent ahead failed, and that statement said what it means: `failure`. knex rewrites the
 * message of the error its query got (it puts the SQL in front), so the meaning travels apart from it, to be thrown by
 * whoever ran the transaction (store/tenant-scope.ts inTenant).
 */
export class DeferredFailure extends Error {
  constructor(readonly failure: Error) {
    super('a statement sent ahead failed');
  }
}

/** The error of a failed group, or what a statement of it sent ahead says it means. */
function failureOf(group: Ahead[], error: Error): Error {
  for (const statement of group) {
    const failure = statement.translate?.(error);
    if (failure) return new DeferredFailure(failure);
  }
  return error;
}

type Callback = (error: Error | null, result?: pg.QueryResult) => void;
type BatchCallback = (error: Error | null, results?: pg.QueryResult[]) => void;

const BEGIN = /^\s*begin\s*;?\s*$/i;
const COMMIT = /^\s*commit\s*;?\s*$/i;
const ROLLBACK = /^\s*rollback\s*;?\s*$/i;
/** Text of one statement (only a trailing semicolon): the extended protocol takes no more. */
const oneStatement = (text: string) => !text.replace(/;\s*$/, '').includes(';');

// pg's own conversion of a JS value to its text form (what every query it prepares uses).
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown };

type PgConnection = {
  stream: { cork?: () => void; uncork?: () => void };
  /** What pg records of the statements prepared on this connection: name → text. */
  parsedStatements: Record<string, string>;
  on: (event: 'parseComplete', listener: () => void) => void;
  off: (event: 'parseComplete', listener: () => void) => void;
  parse: (m: object) => void;
  bind: (m: object) => void;
  describe: (m: object) => void;
  execute: (m: object) => void;
  sync: () => void;
};

/** pg's Query as this module uses it: a client takes any instance of it as a query of its own. */
const Query = pg.Query as unknown as new (config: pg.QueryConfig) => { callback: (error: Error | null, results?: unknown) => void };

/** Statements sent with one Sync: the server runs them in order as one unit; one answer per statement. */
class Batch extends Query {
  readonly #statements: { text: string; values: unknown[]; name: string }[];
  /** Undoes what submit hooked on the connection, once the batch is answered. */
  #done = () => {};

  constructor(statements: Statement[], callback: BatchCallback) {
    const last = statements[statements.length - 1]!;
    super({ text: last.text, rowMode: last.rowMode, types: last.types } as pg.QueryConfig);
    this.#statements = statements.map((s) => ({ text: s.text, values: s.values ?? [], name: s.name ?? '' }));
    this.callback = (error, results) => {
      this.#done();
      if (error) return callback(error);
      callback(null, Array.isArray(results) ? (results as pg.QueryResult[]) : [results as pg.QueryResult]);
    };
  }

  submit(connection: PgConnection): Error | null {
    let prepared: unknown[][];
    try {
      prepared = this.#statements.map((s) => s.values.map((v) => prepareValue(v)));
    } catch (error) {
      return error as Error;
    }
    // A named statement is parsed once per connection. The server answers each Parse in order and
    // skips the rest of the group after an error: a name counts as prepared once its Parse is answered.
    const parses: Statement[] = [];
    const parsed = connection.parsedStatements;
    const onParsed = () => {
      const s = parses.shift();
      if (s?.name) parsed[s.name] = s.text;
    };
    connection.on('parseComplete', onParsed);
    this.#done = () => connection.off('parseComplete', onParsed);
    connection.stream.cork?.();
    try {
      this.#statements.forEach((s, i) => {
        // A text twice in one group (two outbox rows, say) is parsed once: the server would refuse a second Parse of its name.
        if (!s.name || (parsed[s.name] !== s.text && !parses.some((p) => p.name === s.name))) {
          connection.parse({ text: s.text, name: s.name, types: [] });
          parses.push(s);
        }
        connection.bind({ portal: '', statement: s.name, values: prepared[i]!, binary: false });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }
}

const answered = (command: string): pg.QueryResult => ({ command, rowCount: null, oid: 0, rows: [], fields: [] }) as unknown as pg.QueryResult;

export class BatchingClient extends pg.Client {
  /** Statements that leave with the next one: a BEGIN, a transaction's scope, statements nobody waits for. */
  #ahead: Ahead[] = [];
  /** BEGIN is waiting in #ahead: the server has not seen the transaction yet. */
  #beginWaiting = false;
  /** A check refused an answer: nothing more of this transaction runs, and it cannot commit. */
  #refused: Error | undefined;
  /**
   * A tenant-scoped read session: this statement goes in front of every statement, and BEGIN,
   * COMMIT and ROLLBACK are answered here, so that each read is one implicit transaction of the
   * scope and the query (see readInTenant).
   */
  scope: Statement | undefined;
  /** The names of the texts prepared on this connection (at most preparedLimit). */
  readonly #names = new Map<string, string>();
  readonly preparedLimit: number = PREPARED_PER_CONNECTION;

  /** `statement` leaves with the next statement of this connection (at the latest its COMMIT). */
  ahead(statement: Ahead): void {
    this.#ahead.push(statement);
  }

  override query(...args: unknown[]): never {
    const [config, callback] = args as [Statement | string, unknown];
    // knex sends `{ text, values }` with a callback; anything else (a version check, a stream) goes as it is.
    if (typeof config !== 'object' || config === null || typeof callback !== 'function' || 'submit' in config) {
      return (super.query as (...a: unknown[]) => never)(...args);
    }
    this.#send(config, callback as Callback);
    return undefined as never;
  }

  #send(statement: Statement, callback: Callback): void {
    const text = statement.text;
    if (BEGIN.test(text)) {
      if (!this.scope) {
        this.#ahead.push({ text: 'begin' });
        this.#beginWaiting = true;
      }
      return process.nextTick(callback, null, answered('BEGIN'));
    }
    if (ROLLBACK.test(text)) {
      const sent = !this.scope && !this.#beginWaiting;
      this.#reset();
      if (!sent) return process.nextTick(callback, null, answered('ROLLBACK'));
      return this.#wire([statement], (error) => callback(error, answered('ROLLBACK')));
    }
    const refused = this.#refused;
    if (refused) {
      if (!COMMIT.test(text)) return process.nextTick(callback, refused);
      // The server ran the transaction's statements; what it answered was refused: it must not commit.
      this.#reset();
      return this.#wire([{ text: 'rollback' }], () => callback(refused));
    }
    if (COMMIT.test(text)) {
      // Nothing of this transaction reached the server, or there is no transaction (a read session).
      if (this.scope || (this.#beginWaiting && this.#ahead.every((s) => s.text === 'begin' || s.check))) {
        this.#reset();
        return process.nextTick(callback, null, answered('COMMIT'));
      }
      const group = [...this.#ahead, statement];
      this.#reset();
      if (group.length === 1) return this.#wire(group, (error, results) => callback(error, results?.[0]));
      // A statement before COMMIT failed: the server skipped the COMMIT and the transaction is aborted.
      return this.#wire(group, (error, results) =>
        error ? this.#wire([{ text: 'rollback' }], () => callback(failureOf(group, error))) : callback(null, results![results!.length - 1]),
      );
    }
    const before: Ahead[] = this.scope ? [...this.#ahead, this.scope] : this.#ahead;
    this.#ahead = [];
    this.#beginWaiting = false;
    if (before.length === 0) return this.#wire([statement], (error, results) => callback(error, results?.[0]));
    if (statement.values?.length || oneStatement(text)) return this.#wire([...before, statement], this.#answer(before, callback));
    // Several statements in one text (a migration) go by the simple protocol, after the rest.
    this.#wire(
      before,
      this.#answer(before, (error) => (error ? callback(error) : this.#wire([statement], (e, r) => callback(e, r?.[0])))),
    );
  }

  /** Runs the checks of the statements sent ahead, then answers the last statement of the group. */
  #answer(before: Ahead[], callback: Callback): BatchCallback {
    return (error, results) => {
      if (error) return callback(failureOf(before, error));
      for (let i = 0; i < before.length; i++) {
        const refused = before[i]!.check?.(results![i]!);
        if (refused) {
          this.#refused = refused;
          return callback(refused);
        }
      }
      callback(null, results![results!.length - 1]);
    };
  }

  #reset(): void {
    this.#ahead = [];
    this.#beginWaiting = false;
    this.#refused = undefined;
  }

  /**
   * The statement under its name on this connection when it has values (a text without values may
   * hold several statements, or be BEGIN or COMMIT: those go by the simple protocol, unnamed).
   */
  #named(statement: Statement): Statement {
    if (!statement.values?.length) return statement;
    let name = this.#names.get(statement.text);
    if (name === undefined && this.#names.size < this.preparedLimit) this.#names.set(statement.text, (name = `s${this.#names.size}`));
    return name === undefined ? statement : { ...statement, name };
  }

  /**
   * A table's columns changed under a prepared statement (a migration of a newer release while
   * this one runs): the server refuses its plan. The connection is given up (knex destroys it when
   * released), so that the next transaction prepares its statements afresh on a new one.
   */
  #stale(error: Error | null): void {
    if ((error as { code?: string } | null)?.code === '0A000') (this as { __knex__disposed?: string }).__knex__disposed = 'its prepared statements went stale';
  }

  #wire(statements: Statement[], callback: BatchCallback): void {
    countRoundTrip();
    const named = statements.map((s) => this.#named(s));
    if (named.length > 1) {
      (super.query as (q: Batch) => void)(
        new Batch(named, (error, results) => {
          this.#stale(error);
          callback(error, results);
        }),
      );
      return;
    }
    (super.query as (q: Statement, cb: Callback) => void)(named[0]!, (error, result) => {
      this.#stale(error);
      callback(error, result && [result]);
    });
  }
}
