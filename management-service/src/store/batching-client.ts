import { createRequire } from 'node:module';
import pg from 'pg';
import { countRoundTrip } from '@platform/shared';

/**
 * A Postgres connection that sends what can go together in one round trip (docs/adr/0031-http-hot-path.md):
 * a transaction's BEGIN waits and leaves with its first statement, a session's tenant scope goes in
 * front of every statement, and such a group is written at once (extended protocol, one Sync), so
 * the server runs it as one unit and answers once.
 */

export type Statement = { text: string; values?: unknown[]; rowMode?: string; types?: unknown };
type Callback = (error: Error | null, result?: pg.QueryResult) => void;

const BEGIN = /^\s*begin\s*;?\s*$/i;
const END = /^\s*(commit|rollback)\s*;?\s*$/i;
/** Text of one statement (only a trailing semicolon): the extended protocol takes no more. */
const oneStatement = (text: string) => !text.replace(/;\s*$/, '').includes(';');

// pg's own conversion of a JS value to its text form (what every query it prepares uses).
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown };

type PgConnection = {
  stream: { cork?: () => void; uncork?: () => void };
  parse: (m: object) => void;
  bind: (m: object) => void;
  describe: (m: object) => void;
  execute: (m: object) => void;
  sync: () => void;
};

/** pg's Query as this module uses it: a client takes any instance of it as a query of its own. */
const Query = pg.Query as unknown as new (config: pg.QueryConfig) => { callback: Callback };

/** Statements sent with one Sync: the server runs them in order as one unit; the answer is the last one's. */
class Batch extends Query {
  readonly #statements: { text: string; values: unknown[] }[];

  constructor(statements: Statement[], callback: Callback) {
    const last = statements[statements.length - 1]!;
    super({ text: last.text, rowMode: last.rowMode, types: last.types } as pg.QueryConfig);
    this.#statements = statements.map((s) => ({ text: s.text, values: s.values ?? [] }));
    this.callback = (error, results) => {
      if (error) return callback(error);
      const all = results as unknown as pg.QueryResult | pg.QueryResult[];
      callback(null, Array.isArray(all) ? all[all.length - 1] : all);
    };
  }

  submit(connection: PgConnection): Error | null {
    let prepared: unknown[][];
    try {
      prepared = this.#statements.map((s) => s.values.map((v) => prepareValue(v)));
    } catch (error) {
      return error as Error;
    }
    connection.stream.cork?.();
    try {
      this.#statements.forEach((s, i) => {
        connection.parse({ text: s.text, name: '', types: [] });
        connection.bind({ portal: '', statement: '', values: prepared[i]!, binary: false });
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
  /** Statements waiting to leave with the next one (a BEGIN). */
  #pending: Statement[] = [];
  /**
   * A tenant-scoped read session: this statement goes in front of every statement, and BEGIN,
   * COMMIT and ROLLBACK are answered here, so that each read is one implicit transaction of the
   * scope and the query (see readInTenant).
   */
  scope: Statement | undefined;

  override query(...args: unknown[]): never {
    const [config, callback] = args as [Statement | string, unknown];
    // knex sends `{ text, values }` with a callback; anything else (a pool check, a stream) goes as it is.
    if (typeof config !== 'object' || config === null || typeof callback !== 'function' || 'submit' in config) {
      return (super.query as (...a: unknown[]) => never)(...args);
    }
    this.#send(config, callback as Callback);
    return undefined as never;
  }

  #send(statement: Statement, callback: Callback): void {
    const text = statement.text;
    if (BEGIN.test(text)) {
      if (!this.scope) this.#pending.push({ text: 'begin' });
      return process.nextTick(callback, null, answered('BEGIN'));
    }
    if (END.test(text)) {
      const command = text.trim().split(/[\s;]/)[0]!.toUpperCase();
      // A transaction that sent nothing yet ends here; a read session has none to end.
      if (this.scope || this.#pending.length > 0) {
        this.#pending = [];
        return process.nextTick(callback, null, answered(command));
      }
    }
    const before = this.scope ? [...this.#pending, this.scope] : this.#pending;
    this.#pending = [];
    if (before.length === 0) return this.#wire(statement, callback);
    if (statement.values?.length || oneStatement(text)) return this.#wire(new Batch([...before, statement], callback));
    // Several statements in one text (a migration) go by the simple protocol, after the rest.
    this.#wire(new Batch(before, (error) => (error ? callback(error) : this.#wire(statement, callback))));
  }

  #wire(query: Statement | Batch, callback?: Callback): void {
    countRoundTrip();
    if (query instanceof Batch) (super.query as (q: Batch) => void)(query);
    else (super.query as (q: Statement, cb: Callback) => void)(query, callback!);
  }
}
