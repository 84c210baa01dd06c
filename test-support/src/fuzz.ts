import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { OpenAPIV3_1 } from 'openapi-types';

/**
 * Requests built from a contract for fuzz tests: values its schemas accept, and hostile ones
 * (NUL, unpaired surrogates, numbers beyond a double, huge integers, deep nesting, long strings,
 * wrong types, unknown fields) in path parameters, query parameters, headers and bodies.
 */

// A JSON Schema node of a dereferenced contract; only the keywords the generator reads.
type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  patternProperties?: Record<string, Schema>;
  propertyNames?: Schema;
  items?: Schema;
  prefixItems?: Schema[];
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  examples?: unknown[];
  example?: unknown;
};

type Parameter = { name: string; in: 'path' | 'query' | 'header' | 'cookie'; required?: boolean; schema?: Schema };

export type FuzzOperation = {
  operationId: string;
  method: string;
  /** The contract's path template, `/users/{user_id}`. */
  path: string;
  parameters: Parameter[];
  /** The first media type of the request body, its schema, and the contract's example under `example`. */
  body?: { mediaType: string; schema: Schema };
};

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/** Every operation of a dereferenced OpenAPI document. */
export function operationsOf(doc: OpenAPIV3_1.Document): FuzzOperation[] {
  const out: FuzzOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item?.[method] as OpenAPIV3_1.OperationObject | undefined;
      if (!op?.operationId) continue;
      const parameters = [...((item?.parameters ?? []) as Parameter[]), ...((op.parameters ?? []) as Parameter[])];
      const requestBody = op.requestBody as OpenAPIV3_1.RequestBodyObject | undefined;
      const [mediaType, media] = Object.entries(requestBody?.content ?? {})[0] ?? [];
      out.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        parameters,
        body: mediaType
          ? { mediaType, schema: { ...(media?.schema as Schema), ...(media?.example !== undefined ? { example: media.example } : {}) } }
          : undefined,
      });
    }
  }
  return out;
}

/** A number (or any JSON) written as this text in the JSON: JSON.stringify cannot write 1e999999. */
export class RawJson {
  constructor(readonly text: string) {}
}

const RAW = '\u0001raw:';
/** JSON text of a value that may hold RawJsons. */
export function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => (v instanceof RawJson ? `${RAW}${raws.push(v.text) - 1}` : v));
  return text === undefined ? 'null' : text.replace(/"\\u0001raw:(\d+)"/g, (_, i: string) => raws[Number(i)]!);
}

export const hostileNumbers = [
  '1e999999',
  '-1e999999',
  '99999999999999999999',
  '-99999999999999999999',
  '1e-999999',
  '1e309',
  '9223372036854775808',
  '18446744073709551616',
  '-0',
  '0.1',
  '1.5',
  '-1',
  '0',
  '4294967296',
  '2147483648',
];

export const hostileStrings = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  'a\ud800\u0000',
  '',
  ' ',
  "'",
  "''",
  '"',
  '\\',
  '%00',
  '%',
  '*',
  '\\*',
  '😀',
  '\u202e',
  'é'.repeat(3),
  'null',
  'true',
  '0',
  '-1',
  '1e999999',
  '99999999999999999999',
  'NaN',
  'Infinity',
  '0000-01-01',
  '9999-12-31',
  '9999-12-31T23:59:59-14:00',
  '2024-02-30',
  '2024-13-45T25:61:61Z',
  '../../etc/passwd',
  "' or 1=1 --",
  // Names a plain object answers for (docs/adr/0019-no-5xx-input.md).
  '__proto__',
  'constructor',
  'toString',
  '$ASSET_CLASS == \u0000',
  'U01HZ6HGTC3K9582APC9AFTCDHF',
  'P00000000000000000000000000',
  'x'.repeat(300),
  'y'.repeat(100_000),
];

/** A value nested `depth` levels deep, alternating arrays and objects (as JSON text: JSON.stringify would overflow the stack). */
export function nested(depth: number): RawJson {
  const open = Array.from({ length: depth }, (_, i) => (i % 2 ? '[' : '{"a":')).join('');
  const close = Array.from({ length: depth }, (_, i) => (i % 2 ? ']' : '}'))
    .reverse()
    .join('');
  return new RawJson(`${open}1${close}`);
}

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...hostileStrings) },
  { weight: 3, arbitrary: fc.constantFrom(...hostileNumbers.map((n) => new RawJson(n))) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': 1 }, { '\u0000': 1 }, { '\ud800': 'x' }, 1.5, -1, 0) },
  { weight: 1, arbitrary: fc.constantFrom(30, 65, 200, 20_000).map(nested) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      Array.from({ length: 10_000 }, (_, i) => i),
      Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i])),
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);

/** Ids the fuzz may use for references: the letter of the id (`U`, `P`, …) to ids that exist. */
export type KnownIds = Record<string, string[]>;

const ID_PATTERN = /^\^([A-Z])\[0-9A-HJKMNP-TV-Z\]\{26\}\$$/;

function stringOf(schema: Schema, ids: KnownIds): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.max(min, Math.min(schema.maxLength ?? 24, 24));
  if (schema.format === 'date-time')
    return fc.date({ min: new Date('1990-01-01'), max: new Date('2080-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (schema.format === 'date')
    return fc.date({ min: new Date('1990-01-01'), max: new Date('2080-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.format === 'uri' || schema.format === 'uri-reference') return fc.webUrl();
  if (schema.pattern) {
    const letter = ID_PATTERN.exec(schema.pattern)?.[1];
    let matching: fc.Arbitrary<string>;
    try {
      matching = fc.stringMatching(new RegExp(schema.pattern, 'u'));
    } catch {
      matching = fc.string({ minLength: min, maxLength: max });
    }
    const bounded = matching.filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Infinity));
    const known = letter ? ids[letter] : undefined;
    return known?.length ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: bounded }) : bounded;
  }
  return fc.string({ minLength: min, maxLength: max });
}

function numberOf(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const lo = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 1e-9) : -1e6);
  const hi = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 1e-9) : 1e6);
  if (integer) return fc.integer({ min: Math.ceil(Math.max(lo, -1e9)), max: Math.floor(Math.min(hi, 1e9)) });
  return fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true });
}

function merged(schemas: Schema[]): Schema {
  return schemas.reduce<Schema>(
    (acc, s) => ({ ...acc, ...s, properties: { ...acc.properties, ...s.properties }, required: [...(acc.required ?? []), ...(s.required ?? [])] }),
    {},
  );
}

const ANY_ID = /^([A-Z])[0-9A-HJKMNP-TV-Z]{26}$/;

/** A contract's example with its ids replaced by ids that exist (of the same letter), where the fuzz knows some. */
function withKnownIds(example: unknown, ids: KnownIds): unknown {
  if (typeof example === 'string') return ids[ANY_ID.exec(example)?.[1] ?? '']?.[0] ?? example;
  if (Array.isArray(example)) return example.map((e) => withKnownIds(e, ids));
  if (example !== null && typeof example === 'object') return Object.fromEntries(Object.entries(example).map(([k, v]) => [k, withKnownIds(v, ids)]));
  return example;
}

/**
 * Values a schema accepts, most of the time: its examples (with ids that exist), and values built
 * from its keywords (patterns and bounds are honoured where fast-check can).
 */
export function schemaValue(schema: Schema, ids: KnownIds, depth = 0): fc.Arbitrary<unknown> {
  const examples = [...(schema.example !== undefined ? [schema.example] : []), ...(schema.examples ?? [])];
  const built = builtValue(schema, ids, depth);
  return examples.length > 0
    ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...examples.map((e) => withKnownIds(e, ids))) }, { weight: 1, arbitrary: built })
    : built;
}

function builtValue(schema: Schema, ids: KnownIds, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.allOf) return schemaValue(merged(schema.allOf.map((s) => ({ ...s }))), ids, depth);
  const branches = schema.oneOf ?? schema.anyOf;
  if (branches) return fc.oneof(...branches.map((b) => schemaValue({ ...schema, oneOf: undefined, anyOf: undefined, ...b }, ids, depth)));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : schema.properties ? ['object'] : [];
  if (types.length > 1) return fc.oneof(...types.map((t) => schemaValue({ ...schema, type: t }, ids, depth)));
  switch (types[0]) {
    case 'string':
      return stringOf(schema, ids);
    case 'integer':
      return numberOf(schema, true);
    case 'number':
      return numberOf(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      if (schema.prefixItems) return fc.tuple(...schema.prefixItems.map((s) => schemaValue(s, ids, depth + 1)));
      const min = schema.minItems ?? 0;
      const max = Math.max(min, Math.min(schema.maxItems ?? 4, 4));
      return fc.array(schema.items ? schemaValue(schema.items, ids, depth + 1) : fc.jsonValue({ maxDepth: 2 }), { minLength: min, maxLength: max });
    }
    case 'object':
      return objectOf(schema, ids, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function objectOf(schema: Schema, ids: KnownIds, depth: number): fc.Arbitrary<unknown> {
  const required = new Set(schema.required ?? []);
  const props = Object.entries(schema.properties ?? {}).filter(([name]) => depth < 6 || required.has(name));
  const record = fc.record(Object.fromEntries(props.map(([name, s]) => [name, schemaValue(s, ids, depth + 1)])), {
    requiredKeys: props.map(([name]) => name).filter((name) => required.has(name)),
  });
  const extraSchema = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : Object.values(schema.patternProperties ?? {})[0];
  if (!extraSchema || depth >= 6) return record;
  const keys = schema.propertyNames
    ? stringOf(schema.propertyNames, ids)
    : schema.patternProperties
      ? stringOf({ pattern: Object.keys(schema.patternProperties)[0] }, ids)
      : fc.string({ minLength: 1, maxLength: 12 });
  const extra = fc.dictionary(keys, schemaValue(extraSchema, ids, depth + 1), { maxKeys: 3 });
  return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...(r as object) }));
}

/** How many nodes (values at any depth) a JSON value has. */
function countNodes(value: unknown): number {
  if (value !== null && typeof value === 'object' && !(value instanceof RawJson)) {
    return 1 + Object.values(value).reduce<number>((n, v) => n + countNodes(v), 0);
  }
  return 1;
}

/** A copy of `value` whose `index`-th node (depth first, the root is 0) is `replacement`. */
export function replaceNode(value: unknown, index: number, replacement: unknown): unknown {
  let seen = -1;
  const walk = (v: unknown): unknown => {
    seen++;
    if (seen === index) return replacement;
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object' && !(v instanceof RawJson)) return Object.fromEntries(Object.entries(v).map(([k, c]) => [k, walk(c)]));
    return v;
  };
  return walk(value);
}

/** A value of the schema with one node replaced by a hostile value, a key added, or as generated. */
export function hostileVariant(schema: Schema, ids: KnownIds): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      schemaValue(schema, ids),
      fc.nat(),
      fc.integer({ min: 0, max: 9 }),
      hostileValue,
      fc.constantFrom('unknown_field', '\u0000', '\ud800', 'x'.repeat(200), '__proto__', 'constructor', 'hasOwnProperty'),
    )
    .map(([value, at, mode, hostile, key]) => {
      if (mode <= 1) return value;
      if (mode <= 7) return replaceNode(value, at % countNodes(value), hostile);
      if (mode === 8 && value !== null && typeof value === 'object' && !Array.isArray(value)) return { ...value, [key]: hostile };
      return hostile;
    });
}

export type FuzzRequest = {
  method: string;
  /** Path and query, already encoded. */
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Query parameters as sent, to explain a failure. */
  query: Record<string, string>;
};

/**
 * Percent-encodes any string, an unpaired surrogate too (as the three bytes it would have in
 * UTF-8 if it were a code point, which encodeURIComponent refuses to write).
 */
export function encodeAny(s: string): string {
  let out = '';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff)
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    else out += encodeURIComponent(ch);
  }
  return out;
}

const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 0, maxLength: 40 });

/** Query expressions of the management interface's collection language, with hostile values. */
export function queryExpression(paths: string[]): fc.Arbitrary<string> {
  const literal = fc.oneof(
    fc.constantFrom(...hostileNumbers),
    fc.constantFrom(...hostileStrings.filter((s) => s.length < 1000)).map((s) => `'${s.replace(/'/g, "''")}'`),
    fc.constantFrom("'2021-01-01'", "'20210101'", "'2021-01-01T10:00:00+02:00'", 'null', 'true', 'false', "'Pen*'", "'*\\**'", '0', '1e100'),
  );
  const term = fc.oneof(
    fc.tuple(fc.constantFrom(...paths), fc.constantFrom('eq', 'neq', 'lt', 'le', 'gt', 'ge'), literal).map(([p, op, v]) => `${p} ${op} ${v}`),
    fc.tuple(fc.constantFrom(...paths), fc.array(literal, { minLength: 1, maxLength: 3 })).map(([p, vs]) => `${p} in [${vs.join(', ')}]`),
    fc.tuple(fc.constantFrom(...paths), literal, literal).map(([p, a, b]) => `${p} in [${a} to ${b}]`),
  );
  return fc
    .tuple(
      fc.array(term, { minLength: 1, maxLength: 3 }),
      fc.constantFrom('and', 'or'),
      fc.option(fc.constantFrom(...paths)),
      fc.option(fc.constantFrom(...paths)),
    )
    .map(([terms, join, order, select]) =>
      [terms.join(` ${join} `), order ? `orderby ${order} desc` : '', select ? `select ${select}` : ''].filter(Boolean).join(' '),
    );
}

export type RequestOptions = {
  ids: KnownIds;
  /** Candidate values per path parameter name (existing ids, say); hostile ones are added. */
  pathValues: Record<string, string[]>;
  /** Headers every request carries (credentials). */
  headers: Record<string, string>;
  /** Overrides of the generator of a query parameter by name (the collection `query`); undefined leaves it out. */
  queryValues?: Record<string, fc.Arbitrary<string | string[] | undefined>>;
  /** Overrides of the generator of a header parameter by lower-case name; undefined leaves it out. */
  headerValues?: Record<string, fc.Arbitrary<string | undefined>>;
};

const hostileBodyModes = ['mutated', 'mutated', 'mutated', 'mutated', 'hostile-text', 'other-media', 'gzip-junk', 'empty'] as const;

type Part = { valid: fc.Arbitrary<unknown>; hostile: fc.Arbitrary<unknown> };
type Body = { body?: string | Buffer; headers: Record<string, string> };

/**
 * Requests to one operation: parameters, headers and body from its schemas, with at most one of
 * them hostile per request (so that the others let the request get past the contract and the
 * hostile value reaches the handler).
 */
export function requestsFor(op: FuzzOperation, options: RequestOptions): fc.Arbitrary<FuzzRequest> {
  const absent = fc.constant(undefined);
  const hostileText = fc.oneof(fc.constantFrom(...hostileStrings.filter((s) => s.length < 1000)), fc.constantFrom(...hostileNumbers), printable);
  const parts: { kind: 'path' | 'query' | 'header' | 'body'; name: string; part: Part }[] = [];

  for (const p of op.parameters) {
    const schema = p.schema ?? {};
    if (p.in === 'path') {
      const known = options.pathValues[p.name];
      parts.push({
        kind: 'path',
        name: p.name,
        part: {
          // The first candidate (an entity that exists) most of the time.
          valid: known?.length
            ? fc.oneof({ weight: 4, arbitrary: fc.constant(known[0]!) }, { weight: 1, arbitrary: fc.constantFrom(...known) })
            : stringOf(schema, options.ids),
          hostile: fc.oneof(
            fc.constantFrom(...hostileStrings.filter((s) => s.length > 0 && s.length < 1000)),
            printable.filter((s) => s.length > 0),
          ),
        },
      });
    } else if (p.in === 'query') {
      const generated = options.queryValues?.[p.name] ?? schemaValue(schema, options.ids).map((v) => (Array.isArray(v) ? v.map(String) : String(v)));
      parts.push({
        kind: 'query',
        name: p.name,
        part: {
          valid: p.required ? generated : fc.oneof(absent, generated),
          hostile: fc.oneof({ weight: 3, arbitrary: hostileText }, { weight: 1, arbitrary: fc.array(hostileText, { minLength: 2, maxLength: 3 }) }),
        },
      });
    } else if (p.in === 'header') {
      const generated =
        options.headerValues?.[p.name.toLowerCase()] ??
        schemaValue(schema, options.ids)
          .map(String)
          .filter((s) => /^[\x20-\x7e]*$/.test(s));
      parts.push({
        kind: 'header',
        name: p.name,
        part: {
          valid: p.required ? generated : fc.oneof(absent, generated),
          hostile: fc.oneof(printable, fc.constantFrom('99999999999999999999', '0', '"1"', '1e999999', '-1', '*/*;q=2')),
        },
      });
    }
  }
  // A parameter the contract does not name, or qs's bracket syntax for objects and arrays.
  parts.push({
    kind: 'query',
    name: 'extra',
    part: { valid: absent, hostile: fc.tuple(fc.constantFrom('unknown', 'limit[$gt]', 'query[0]', 'embed[a][b]', 'offset[]'), hostileText) },
  });
  if (op.body) {
    const { mediaType: type, schema } = op.body;
    const encode = (value: unknown): Body => ({ body: type === 'text/csv' ? csvOf(value) : toJson(value), headers: { 'content-type': type } });
    const hostile = fc
      .tuple(fc.constantFrom(...hostileBodyModes), hostileVariant(schema, options.ids), fc.string({ unit: 'binary', maxLength: 60 }))
      .map(([mode, value, junk]): Body => {
        if (mode === 'empty') return { headers: {} };
        if (mode === 'hostile-text') return { body: junk, headers: { 'content-type': type } };
        if (mode === 'other-media') return { body: toJson(value), headers: { 'content-type': type === 'text/csv' ? 'application/json' : 'text/csv' } };
        if (mode === 'gzip-junk')
          return {
            body: junk.length % 2 ? 'not gzip at all' : gzipSync(toJson(value)).subarray(0, 12),
            headers: { 'content-type': type, 'content-encoding': 'gzip' },
          };
        return encode(value);
      });
    parts.push({ kind: 'body', name: 'body', part: { valid: schemaValue(schema, options.ids).map(encode), hostile } });
  }

  const values = fc.tuple(...parts.map(({ part }) => fc.tuple(part.valid, part.hostile)));
  // -1: every part as its schema says (which is not always valid: patterns and rules beyond the schema).
  return fc.tuple(fc.integer({ min: -1, max: parts.length - 1 }), values).map(([target, pairs]) => {
    const path: Record<string, string> = {};
    const query: Record<string, string | string[]> = {};
    const headers: Record<string, string> = { ...options.headers };
    let body: Body = { headers: {} };
    parts.forEach(({ kind, name }, i) => {
      const [valid, hostile] = pairs[i] as [unknown, unknown];
      const value = i === target ? hostile : valid;
      if (value === undefined) return;
      if (kind === 'path') path[name] = String(value);
      else if (kind === 'query' && name === 'extra') query[(value as [string, string])[0]] = (value as [string, string])[1];
      else if (kind === 'query') query[name] = Array.isArray(value) ? value.map(String) : String(value);
      else if (kind === 'header') headers[name] = String(value);
      else body = value as Body;
    });
    const url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeAny(path[name] ?? ''));
    const search = Object.entries(query)
      .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((one) => `${encodeURIComponent(k)}=${encodeAny(one)}`))
      .join('&');
    return {
      method: op.method,
      url: search ? `${url}?${search}` : url,
      headers: { ...headers, ...body.headers },
      body: body.body,
      query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])),
    };
  });
}

/** A CSV document of a generated value: its own text when it is one, otherwise cells holding its leaves. */
function csvOf(value: unknown): string {
  if (typeof value === 'string') return value;
  const cells = JSON.stringify(value, (_k, v: unknown) => (v instanceof RawJson ? v.text : v)) ?? '';
  return `instrument_id,my_key,other\nUS0378331005,${cells.slice(0, 200)},x\n`;
}

export type FuzzAnswer = { status: number; contentType: string; text: string; body: any };

export async function send(base: string, request: FuzzRequest): Promise<FuzzAnswer> {
  const res = await fetch(base + request.url, { method: request.method, headers: request.headers, body: request.body });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, body };
}

/** A short account of a request for an assertion message. */
export function describeRequest(request: FuzzRequest): string {
  const body =
    request.body === undefined
      ? ''
      : Buffer.isBuffer(request.body)
        ? `<${request.body.length} bytes>`
        : request.body.length > 300
          ? `${request.body.slice(0, 300)}… (${request.body.length} chars)`
          : request.body;
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([k]) => !/authorization|api-key/i.test(k)));
  return `${request.method} ${request.url.slice(0, 300)} ${JSON.stringify(headers)} ${JSON.stringify(body)}`;
}

/**
 * What is wrong with an answer, or undefined: a 5xx (501 only where `notBuilt` allows it, 503
 * never), or an error that is not problem+json with a code of the contract's enum.
 */
/**
 * What an error body must never show: a stack frame or source position, a database's own words
 * (SQLSTATE, a relation, a violated constraint, a syntax error near), a file path of the server, or
 * an internal address.
 */
const INTERNALS: readonly [string, RegExp][] = [
  ['a stack frame', /\n\s+at \S.*\(|\.(ts|js|mjs):\d+:\d+/],
  [
    'database wording',
    /SQLSTATE|relation "|violates (unique|foreign key|check|not-null) constraint|syntax error at or near|duplicate key value|\bpg_[a-z_]+\(|DuckDB|Binder Error|Catalog Error/i,
  ],
  ['a server path', /\/node_modules\/|file:\/\/\/|\/work\/|\/src\/[a-z-]+\//],
  ['an internal address', /\b(127\.0\.0\.1|localhost|0\.0\.0\.0):\d{2,5}\b|ECONNREFUSED|ETIMEDOUT/],
];

/** Which internal detail an error body shows, if any. */
export function leakedInternals(text: string): string | undefined {
  return INTERNALS.find(([, pattern]) => pattern.test(text))?.[0];
}

export function answerProblem(answer: FuzzAnswer, codes: readonly string[], notBuilt: boolean): string | undefined {
  if (answer.status >= 500 && !(answer.status === 501 && notBuilt)) return `answered ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (answer.status < 400) return undefined;
  const leaked = leakedInternals(answer.text);
  if (leaked) return `answered ${answer.status} showing ${leaked}: ${answer.text.slice(0, 300)}`;
  if (!answer.contentType.startsWith('application/problem+json')) return `answered ${answer.status} as ${answer.contentType}: ${answer.text.slice(0, 300)}`;
  const body = answer.body as { status?: unknown; code?: unknown; detail?: unknown } | undefined;
  if (body?.status !== answer.status || typeof body.detail !== 'string' || !codes.includes(String(body.code))) {
    return `answered ${answer.status} with a problem outside the contract: ${answer.text.slice(0, 300)}`;
  }
  return undefined;
}

/** The ErrorCode enum of a dereferenced contract. */
export const errorCodes = (doc: OpenAPIV3_1.Document): string[] => (doc.components?.schemas?.ErrorCode as { enum?: string[] } | undefined)?.enum ?? [];

/** The run's seed: FUZZ_SEED when given (to replay a failure), a fixed one otherwise. */
export const fuzzSeed = (): number => Number(process.env.FUZZ_SEED ?? 20261123);
/** Requests per operation: FUZZ_RUNS when given. */
export const fuzzRuns = (fallback: number): number => Number(process.env.FUZZ_RUNS ?? fallback);

const hash = (text: string): number => [...text].reduce((h, ch) => (Math.imul(h, 31) + ch.charCodeAt(0)) | 0, 0);

/**
 * Sends `runs` generated requests to the operation and fails with the smallest bad answer found,
 * the request that caused it, and how to replay it (the seed of an operation is the run's seed
 * mixed with its operationId, so FUZZ_SEED and --grep <operationId> replay one operation).
 */
export async function fuzzOperation(options: {
  base: string;
  op: FuzzOperation;
  requests: fc.Arbitrary<FuzzRequest>;
  check: (request: FuzzRequest, answer: FuzzAnswer) => string | undefined;
  seed: number;
  runs: number;
}): Promise<void> {
  const { base, op, requests, check, runs } = options;
  const seed = (options.seed ^ hash(op.operationId)) >>> 0;
  const statuses = new Map<number, number>();
  const result = await fc.check(
    fc.asyncProperty(requests, async (request) => {
      const answer = await send(base, request);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const problem = check(request, answer);
      if (problem) throw new Error(`${problem}\n  request: ${describeRequest(request)}`);
    }),
    { seed, numRuns: runs },
  );
  // FUZZ_STATS=1 shows how deep the requests got (how many passed validation).
  if (process.env.FUZZ_STATS)
    console.log(
      `      ${op.operationId}: ${[...statuses]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status}×${n}`)
        .join(' ')}`,
    );
  if (result.failed) {
    const error = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    throw new Error(
      `${op.operationId} (${op.method} ${op.path}) failed with fast-check seed ${seed} (replay: FUZZ_SEED=${options.seed} npm test -- <this file> --grep ${op.operationId}):\n  ${error}`,
    );
  }
}
