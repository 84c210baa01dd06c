import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Condition, Query, Value } from '../../src/query/ast.ts';
import { compileQuery, QueryError } from '../../src/query/compile.ts';
import { parseQuery, printQuery, QuerySyntaxError } from '../../src/query/parser.ts';
import type { FieldType } from '../../src/query/fields.ts';

/** The AST without positions, which depend on the text's spacing. */
const shape = (q: Query) => JSON.parse(JSON.stringify(q, (key, value) => (key === 'at' ? undefined : value)));

const KEYWORDS = new Set(['and', 'or', 'in', 'to', 'orderby', 'select', 'eq', 'neq', 'lt', 'le', 'gt', 'ge', 'asc', 'desc', 'true', 'false', 'null']);
const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/).filter((n) => !KEYWORDS.has(n));
const path = fc.array(name, { minLength: 1, maxLength: 3 });
const value: fc.Arbitrary<Value> = fc.oneof(
  fc.string({ maxLength: 12 }).map((s) => ({ kind: 'string' as const, value: s })),
  fc
    .oneof(
      fc.integer({ min: -1e6, max: 1e6 }).map(String),
      fc.double({ min: -1e6, max: 1e6, noNaN: true }).map((d) => d.toFixed(3)),
    )
    .map((text) => ({ kind: 'number' as const, text })),
  fc.boolean().map((b) => ({ kind: 'boolean' as const, value: b })),
  fc.constant({ kind: 'null' as const }),
);
const leaf: fc.Arbitrary<Condition> = fc.oneof(
  fc.record({
    type: fc.constant('compare' as const),
    path,
    op: fc.constantFrom('eq' as const, 'neq' as const, 'lt' as const, 'le' as const, 'gt' as const, 'ge' as const),
    value,
    at: fc.constant(0),
  }),
  fc.record({ type: fc.constant('in' as const), path, values: fc.array(value, { minLength: 1, maxLength: 3 }), at: fc.constant(0) }),
  fc.record({ type: fc.constant('range' as const), path, from: value, to: value, at: fc.constant(0) }),
);
const condition: fc.Arbitrary<Condition> = fc.letrec<{ c: Condition }>((tie) => ({
  c: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ type: fc.constantFrom('and' as const, 'or' as const), items: fc.array(tie('c'), { minLength: 2, maxLength: 3 }) }),
  ),
})).c;
const query: fc.Arbitrary<Query> = fc.record({
  where: fc.option(condition, { nil: undefined }),
  orderBy: fc.array(fc.record({ path, direction: fc.constantFrom('asc' as const, 'desc' as const), at: fc.constant(0) }), { maxLength: 3 }),
  select: fc.option(fc.array(fc.record({ path, at: fc.constant(0) }), { minLength: 1, maxLength: 3 }), { nil: undefined }),
});

describe('query language properties', () => {
  it('prints any AST to text that parses back to the same AST', () => {
    fc.assert(
      fc.property(query, (q) => {
        const expected = shape(q);
        if (expected.where === undefined) delete expected.where;
        if (expected.select === undefined) delete expected.select;
        assert.deepEqual(shape(parseQuery(printQuery(q))), expected);
      }),
      { numRuns: 500 },
    );
  });

  it('never lets a value reach the SQL text: every value is a bound parameter', () => {
    const types: FieldType[] = ['string', 'number', 'boolean', 'date-time', 'array'];
    fc.assert(
      fc.property(query, fc.constantFrom(...types), fc.string({ minLength: 1, maxLength: 10 }), (q, type, marker) => {
        const withMarker = JSON.parse(JSON.stringify(q), (key, v) => (key === 'value' && typeof v === 'string' ? `§${marker}${v}` : v));
        try {
          const compiled = compileQuery(withMarker, () => type);
          assert.ok(!compiled.where.sql.includes('§'), compiled.where.sql);
        } catch (error) {
          if (!(error instanceof QueryError)) throw error;
        }
      }),
      { numRuns: 500 },
    );
  });

  it('answers any text with an AST or a positioned syntax error, nothing else', () => {
    const alphabet = fc.constantFrom(
      ...`abcdeqnltgior ()[],.'*\\-0123456789$_;"`.split(''),
      ' and ',
      ' or ',
      ' eq ',
      ' in ',
      ' to ',
      'orderby ',
      'select ',
      "'x'",
      'null',
    );
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 30 }).map((parts) => parts.join('')),
        (text) => {
          try {
            parseQuery(text);
          } catch (error) {
            assert.ok(error instanceof QuerySyntaxError, String(error));
            assert.ok(error.position >= 0 && error.position <= text.length);
            assert.match(error.message, /^Invalid query at position \d+: expected .+, found .+\.$/);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
