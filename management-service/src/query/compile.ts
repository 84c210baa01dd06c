import type { Condition, Path, Query, SortKey, Value } from './ast.ts';
import type { FieldType } from './fields.ts';

/** A query that parses but cannot run: unknown path, wrong type of value. */
export class QueryError extends Error {
  constructor(
    readonly position: number,
    message: string,
  ) {
    super(`Invalid query at position ${position}: ${message}`);
  }
}

export type Sql = { sql: string; bindings: unknown[] };
export type CompiledQuery = { where: Sql; orderBy: Sql; select?: Path[]; namesDeleted: boolean };

/**
 * Metadata fields are columns; every other path is inside the jsonb document. Maps, as every
 * lookup here is by a name the client wrote: a plain object would answer `constructor` or
 * `toString` with a member of Object.prototype (docs/adr/0019-no-5xx-input.md).
 */
const COLUMNS: ReadonlyMap<string, { sql: string; type: FieldType }> = new Map([
  ['id', { sql: 'e.id', type: 'string' }],
  ['external_id', { sql: 'e.external_id', type: 'string' }],
  ['creation_datetime', { sql: 'e.created_at', type: 'date-time' }],
  ['version', { sql: 'e.version', type: 'number' }],
  ['version_datetime', { sql: 'e.version_at', type: 'date-time' }],
  ['version_authored_by_user_id', { sql: "(case when e.version_author_id like 'U%' then e.version_author_id end)", type: 'string' }],
  ['deleted', { sql: 'e.deleted', type: 'boolean' }],
  ['readable_by', { sql: 'e.readable_by', type: 'array' }],
  ['modifiable_by', { sql: 'e.modifiable_by', type: 'array' }],
]);

const literal = (name: string) => `'${name.replace(/'/g, "''")}'`;

/** `e.doc -> 'a' -> 'b'` (jsonb), for lists and objects. */
const jsonbAt = (path: Path) => `e.doc${path.map((p) => ` -> ${literal(p)}`).join('')}`;
/** `'{a,b}'`: the path argument of the platform_* functions of migration 003 (names are [A-Za-z0-9_$]). */
const pathArray = (path: Path) => literal(`{${path.join(',')}}`);
/** Typed reads of a document field, written exactly as the indexes of migration 003 are. */
const typedAt = (fn: string, path: Path) => `${fn}(e.doc, ${pathArray(path)})`;

/**
 * Paths with an index read through the LEAKPROOF functions the index is built on (so that the
 * index serves them under row-level security); the others through jsonb's own operators, which
 * are faster when Postgres has to look at every row anyway.
 */
const INDEXED: ReadonlyMap<string, string> = new Map([
  ['owned_by_user_id', 'platform_text'],
  ['config.manager_settings.suitability_profile_id', 'platform_text'],
  ['config.manager_settings.divest_amount', 'platform_numeric'],
]);

function documentField(path: Path, type: FieldType): string {
  const indexed = INDEXED.get(path.join('.'));
  if (indexed) return typedAt(indexed, path);
  const at = pathArray(path);
  switch (type) {
    case 'number':
      return `platform_number(e.doc #> ${at})`;
    case 'boolean':
      return `(case when jsonb_typeof(e.doc #> ${at}) = 'boolean' then (e.doc #>> ${at})::boolean end)`;
    case 'date-time':
      return typedAt('platform_timestamptz', path);
    case 'array':
    case 'object':
      return jsonbAt(path);
    default:
      return `(e.doc #>> ${at})`;
  }
}

type Field = { sql: string; type: FieldType; column: boolean };

/**
 * Compiles a parsed query to SQL over the `entities` table (alias `e`) for one entity type.
 * Paths are checked against the contract's schema (`typeOf`); every value is a bound parameter.
 */
export function compileQuery(query: Query, typeOf: (path: Path) => FieldType | undefined): CompiledQuery {
  const field = (path: Path, at: number): Field => {
    const column = path.length === 1 ? COLUMNS.get(path[0]!) : undefined;
    if (column) return { ...column, column: true };
    const type = typeOf(path);
    if (!type) throw new QueryError(at, `${path.join('.')} is not a field of this collection.`);
    const sql = documentField(path, type);
    return { sql: type === 'string' && FOLDED.has(path.join('.')) ? `lower(${sql})` : sql, type, column: false };
  };

  const where = query.where ? condition(asStored(query.where), field) : { sql: 'true', bindings: [] };
  const keys = query.orderBy.map((key) => sortKey(key, field));
  const orderBy = { sql: [...keys.map((k) => k.sql), 'e.id asc'].join(', '), bindings: keys.flatMap((k) => k.bindings) };
  const select = query.select?.map(({ path, at }) => (field(path, at), path));
  return { where, orderBy, select, namesDeleted: mentionsDeleted(query.where) };
}

/** Identifiers compared as stored (docs/adr/0040-identifiers-as-people-read-them.md): NFC, e-mails without case. */
const IDENTIFIERS = new Set(['external_id', 'email']);
/** Compared in lower case on both sides; the SQL side is `lower(…)`. */
const FOLDED = new Set(['email']);

function asStored(c: Condition): Condition {
  if ('items' in c) return { ...c, items: c.items.map(asStored) };
  const name = c.path.join('.');
  if (!IDENTIFIERS.has(name)) return c;
  const stored = (v: Value): Value => {
    if (v.kind !== 'string') return v;
    const nfc = v.value.normalize('NFC');
    return { kind: 'string', value: FOLDED.has(name) ? nfc.toLowerCase() : nfc };
  };
  // An external_id stored before identifiers were kept in NFC may be in another form: `eq` and `in`
  // also find the form the query holds.
  const withSent = (values: Value[]) => {
    const all = [...values.map(stored), ...values];
    return all.filter((v, i) => all.findIndex((w) => JSON.stringify(w) === JSON.stringify(v)) === i);
  };
  const folded = FOLDED.has(name);
  if (c.type === 'compare') {
    if (c.op === 'eq' && !folded && c.value.kind === 'string' && !hasWildcard(c.value.value)) {
      const values = withSent([c.value]);
      if (values.length > 1) return { type: 'in', path: c.path, values, at: c.at };
    }
    return { ...c, value: stored(c.value) };
  }
  if (c.type === 'in') return { ...c, values: folded ? c.values.map(stored) : withSent(c.values) };
  return { ...c, from: stored(c.from), to: stored(c.to) };
}

function mentionsDeleted(c: Condition | undefined): boolean {
  if (!c) return false;
  if ('items' in c) return c.items.some(mentionsDeleted);
  return c.path.length === 1 && c.path[0] === 'deleted';
}

function sortKey(key: SortKey, field: (path: Path, at: number) => Field): Sql {
  const f = field(key.path, key.at);
  if (f.type === 'array' || f.type === 'object')
    throw new QueryError(key.at, `${key.path.join('.')} holds ${f.type === 'array' ? 'a list' : 'an object'} and cannot be sorted on.`);
  return { sql: `${f.sql} ${key.direction} nulls last`, bindings: [] };
}

const SQL_OPS = { eq: '=', neq: '<>', lt: '<', le: '<=', gt: '>', ge: '>=' } as const;

/**
 * The paths a condition holds a value at whenever it is true: `neq null`, and every comparison
 * with a value except `neq` (whose SQL is false or unknown on a null field, never true).
 */
function valuedPath(c: Condition): string | undefined {
  if ('items' in c) return undefined;
  if (c.type === 'compare' && (c.op === 'neq') !== (c.value.kind === 'null')) return undefined;
  return c.path.join('.');
}

/**
 * `valued`: the paths another term of an enclosing `and` holds a value at. A row is selected only
 * where that term is true, and the language has no negation, so there `neq v` may be compiled as
 * a plain `<>`: the same rows, and a condition Postgres can match to a partial index that leaves
 * out v (`divest_amount neq 0 and divest_amount neq null` to one holding only non-zero amounts,
 * docs/adr/0028-pending-withdrawals-index.md).
 */
function condition(c: Condition, field: (path: Path, at: number) => Field, valued: ReadonlySet<string> = new Set()): Sql {
  if ('items' in c) {
    const parts = c.items.map((item, i) => {
      if (c.type === 'or') return condition(item, field, valued);
      const others = c.items.filter((_, j) => j !== i).map(valuedPath);
      return condition(item, field, new Set([...valued, ...others.filter((p): p is string => p !== undefined)]));
    });
    return { sql: `(${parts.map((p) => p.sql).join(` ${c.type} `)})`, bindings: parts.flatMap((p) => p.bindings) };
  }
  const f = field(c.path, c.at);
  const name = c.path.join('.');
  if (c.type === 'in') {
    if (f.type === 'array')
      return { sql: f.column ? `(${f.sql} && ?::text[])` : `jsonb_exists_any(${f.sql}, ?::text[])`, bindings: [c.values.map((v) => text(v, name, c.at))] };
    const values = c.values.map((v) => typed(v, f.type, name, c.at));
    return { sql: `${f.sql} = any(?::${pgArrayType(f.type)})`, bindings: [values] };
  }
  if (c.type === 'range') {
    if (f.type === 'date-time') {
      const from = instant(c.from, name, c.at);
      const to = instant(c.to, name, c.at);
      return {
        sql: `(${f.sql} >= ?::timestamptz and ${f.sql} ${to.dateOnly ? '<' : '<='} ?::timestamptz)`,
        bindings: [from.start, to.dateOnly ? to.nextDay : to.start],
      };
    }
    if (f.type === 'number' || f.type === 'string' || f.type === 'date') {
      return {
        sql: `(${f.sql} between ?::${pgType(f.type)} and ?::${pgType(f.type)})`,
        bindings: [typed(c.from, f.type, name, c.at), typed(c.to, f.type, name, c.at)],
      };
    }
    throw new QueryError(c.at, `${name} cannot be compared with a range.`);
  }
  // compare
  const { op, value } = c;
  if (value.kind === 'null') {
    if (op !== 'eq' && op !== 'neq') throw new QueryError(c.at, `only eq and neq compare with null.`);
    const isNull = f.type === 'array' || f.type === 'object' ? `coalesce(jsonb_typeof(${f.sql}), 'null') = 'null'` : `${f.sql} is null`;
    return { sql: op === 'eq' ? isNull : `not (${isNull})`, bindings: [] };
  }
  if (f.type === 'object') throw new QueryError(c.at, `${name} holds an object: compare it with null only.`);
  if (f.type === 'array') {
    if (op !== 'eq' && op !== 'neq') throw new QueryError(c.at, `${name} holds a list: use eq, neq or in.`);
    const contains = f.column ? `(? = any(${f.sql}))` : `(${f.sql} @> jsonb_build_array(?::text))`;
    return { sql: op === 'eq' ? contains : `not coalesce(${contains}, false)`, bindings: [text(value, name, c.at)] };
  }
  if (f.type === 'boolean' && op !== 'eq' && op !== 'neq') throw new QueryError(c.at, `${name} is true or false: use eq or neq.`);
  if ((f.type === 'string' || f.type === 'date') && value.kind === 'string' && (op === 'eq' || op === 'neq') && hasWildcard(value.value)) {
    const like = `(${f.sql} like ? escape '\\')`;
    return { sql: op === 'eq' ? like : `not coalesce(${like}, false)`, bindings: [likePattern(value.value)] };
  }
  // Without wildcards, `\*` still means a star.
  const plain: Value = value.kind === 'string' ? { kind: 'string', value: value.value.replace(/\\\*/g, '*') } : value;
  const bound = f.type === 'date-time' ? instant(plain, name, c.at).start : typed(plain, f.type, name, c.at);
  const cast = `?::${pgType(f.type)}`;
  // neq also matches entities where the field is null or missing (docs/adr/0011-query-language.md),
  // unless another term of the conjunction holds a value there.
  if (op === 'neq') return { sql: valued.has(name) ? `(${f.sql} <> ${cast})` : `(${f.sql} is distinct from ${cast})`, bindings: [bound] };
  if (op === 'eq' && f.type === 'date-time' && value.kind === 'string' && isDateOnly(value.value)) {
    const day = instant(value, name, c.at);
    return { sql: `(${f.sql} >= ?::timestamptz and ${f.sql} < ?::timestamptz)`, bindings: [day.start, day.nextDay] };
  }
  return { sql: `(${f.sql} ${SQL_OPS[op]} ${cast})`, bindings: [bound] };
}

const pgType = (type: FieldType) => (type === 'number' ? 'numeric' : type === 'boolean' ? 'boolean' : type === 'date-time' ? 'timestamptz' : 'text');
const pgArrayType = (type: FieldType) => `${pgType(type)}[]`;

function text(v: Value, name: string, at: number): string {
  if (v.kind === 'string') return v.value;
  if (v.kind === 'number') return v.text;
  throw new QueryError(at, `${name} compares with text values.`);
}

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
/** Postgres numeric keeps at most this many digits after the decimal point. */
const MAX_NUMERIC_SCALE = 16383;

/**
 * A number of the query as the text bound to a numeric parameter, exact; one that Postgres could
 * not hold (`1e999999`, `1e-99999`) or that no stored value can reach is refused at its term.
 */
function numeric(text: string, name: string, at: number): string {
  if (!Number.isFinite(Number(text)))
    throw new QueryError(at, `${name} is compared with ${text.slice(0, 40)}, which is beyond the range of numbers (±1.8e308).`);
  const [, fraction = '', exponent = 'e0'] = /^[^.eE]*(?:\.(\d*))?([eE].*)?$/.exec(text) ?? [];
  if (fraction.length - Number(exponent.slice(1)) > MAX_NUMERIC_SCALE) {
    throw new QueryError(at, `${name} is compared with ${text.slice(0, 40)}, which has more than ${MAX_NUMERIC_SCALE} digits after the decimal point.`);
  }
  return text;
}

function typed(v: Value, type: FieldType, name: string, at: number): unknown {
  switch (type) {
    case 'number':
      if (v.kind === 'number') return numeric(v.text, name, at);
      if (v.kind === 'string' && NUMBER.test(v.value)) return numeric(v.value, name, at);
      throw new QueryError(at, `${name} is a number: compare it with a number.`);
    case 'boolean':
      if (v.kind === 'boolean') return v.value;
      throw new QueryError(at, `${name} is true or false.`);
    case 'date-time':
      return instant(v, name, at).start;
    default:
      return text(v, name, at);
  }
}

const hasWildcard = (s: string) => /(^|[^\\])\*/.test(s);

/** `*` is the wildcard and `\*` a literal star; LIKE's own % _ \ are escaped. */
function likePattern(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\' && s[i + 1] === '*') {
      out += '*';
      i++;
    } else if (ch === '*') out += '%';
    else if (ch === '%' || ch === '_' || ch === '\\') out += `\\${ch}`;
    else out += ch;
  }
  return out;
}

const DATE = /^(\d{4})-?(\d{2})-?(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const isDateOnly = (s: string) => DATE.test(s);

/** A date (`2020-01-01`, `20200101`), a date-time, or one with an offset, as an instant. */
function instant(v: Value, name: string, at: number): { start: string; nextDay: string; dateOnly: boolean } {
  const s = v.kind === 'string' ? v.value : v.kind === 'number' ? v.text : '';
  const date = s.match(DATE);
  if (date) {
    const start = new Date(`${date[1]}-${date[2]}-${date[3]}T00:00:00.000Z`);
    if (!Number.isNaN(start.getTime()) && start.toISOString().startsWith(`${date[1]}-${date[2]}-${date[3]}`)) {
      return { start: timestamp(start, name, at), nextDay: timestamp(new Date(start.getTime() + 86_400_000), name, at), dateOnly: true };
    }
  }
  const m = s.match(DATE_TIME);
  if (m) {
    const offset = m[8] ? (m[8].toUpperCase() === 'Z' ? 'Z' : m[8].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2')) : 'Z';
    const parsed = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${m[7] ?? ''}${offset}`);
    if (!Number.isNaN(parsed.getTime())) return { start: timestamp(parsed, name, at), nextDay: timestamp(parsed, name, at), dateOnly: false };
  }
  throw new QueryError(at, `${name} is a time: compare it with a date ('2020-01-31', '20200131') or a date-time ('2020-01-31T12:00:00Z').`);
}

/**
 * The instant as Postgres reads it. Years 1 to 9999 only: JavaScript writes others as `+010000`
 * or `0000`, which Postgres does not take; the day after 9999-12-31 is `infinity`.
 */
function timestamp(time: Date, name: string, at: number): string {
  const year = time.getUTCFullYear();
  if (year > 9999) return 'infinity';
  if (year < 1) throw new QueryError(at, `${name} is compared with a time before the year 1.`);
  return time.toISOString();
}
