import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { FuzzOperation } from './operations.ts';
import { hostileVariant, schemaValue, stringOf, type KnownIds } from './schema-values.ts';
import { hostileNumbers, hostileStrings, RawJson, toJson } from './values.ts';

// Requests built from a contract: values its schemas accept, and hostile ones in path parameters,
// query parameters, headers and bodies, at most one part hostile per request.

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
