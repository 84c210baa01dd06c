import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadContract } from '@platform/shared';
import { PROTOTYPE_NAMES } from '@platform/test-support/prototype-names';
import { changedPaths } from '../../src/domain/customer-rights.ts';
import { entityKinds } from '../../src/domain/entities/catalog.ts';
import { getPath, jsonEqual, mergePatch, type Doc } from '../../src/domain/merge.ts';
import { pick } from '../../src/http/select.ts';
import { compileQuery, QueryError } from '../../src/query/compile.ts';
import { fieldType } from '../../src/query/fields.ts';
import { parseQuery } from '../../src/query/parser.ts';

type Schema = Parameters<typeof fieldType>[0];

/** An entity schema with each way a key can be admitted: declared, by pattern, any key of a map, any key matching propertyNames. */
const SCHEMA: Schema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    holdings: { type: 'object', patternProperties: { '^[A-Z]{2}[A-Z0-9]{9}[0-9]$': { type: 'number' } }, additionalProperties: false },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    bands: { type: 'object', propertyNames: { pattern: '^[A-Z][A-Z0-9_]{0,63}$' }, additionalProperties: { type: 'array' } },
  },
};

const name = fc.constantFrom(...PROTOTYPE_NAMES);

describe('names of Object.prototype in the query language and the documents (pure)', () => {
  it('fieldType: not a declared field, nor a key of a map whose propertyNames exclude it', () => {
    for (const n of PROTOTYPE_NAMES) {
      assert.equal(fieldType(SCHEMA, [n]), undefined, n);
      assert.equal(fieldType(SCHEMA, ['name', n]), undefined, n);
      assert.equal(fieldType(SCHEMA, ['holdings', n]), undefined, n);
      assert.equal(fieldType(SCHEMA, ['bands', n]), undefined, n);
      // A map that admits any key admits these too: they are keys like any other there.
      assert.equal(fieldType(SCHEMA, ['labels', n]), 'string', n);
    }
    assert.equal(fieldType(SCHEMA, ['bands', 'EQUITY']), 'array');
    assert.equal(fieldType(SCHEMA, ['holdings', 'IE00B4L5Y983']), 'number');
  });

  it("fieldType over the contract: no entity kind's schema has such a field, at the top or under any object field", async () => {
    const schemas = (await loadContract('management')).components!.schemas! as Record<string, Schema>;
    const roots = [...entityKinds.map((k) => k.schema), 'Optimization'];
    for (const root of roots) {
      const schema = schemas[root]!;
      assert.ok(schema, root);
      const objects = Object.keys(schema.properties ?? {}).filter((p) => fieldType(schema, [p]) === 'object');
      for (const n of PROTOTYPE_NAMES) {
        assert.equal(fieldType(schema, [n]), undefined, `${root}: ${n}`);
        for (const parent of objects) assert.equal(fieldType(schema, [parent, n]), undefined, `${root}: ${parent}.${n}`);
      }
    }
  });

  it('compileQuery: a filter, sort key or selection naming one is a QueryError at the position of its path', () => {
    const typeOf = (path: string[]) => fieldType(SCHEMA, path);
    fc.assert(
      fc.property(name, fc.constantFrom('filter', 'in', 'orderby', 'select'), fc.boolean(), (n, place, lead) => {
        const head = lead ? "name eq 'a' " : '';
        const [prefix, suffix] = {
          filter: [lead ? `${head}and ` : '', " eq 'x'"],
          in: [lead ? `${head}and ` : '', ' in [1, 2]'],
          orderby: [`${head}orderby name, `, ' desc'],
          select: [`${head}select name, `, ''],
        }[place] as [string, string];
        const text = `${prefix}${n}${suffix}`;
        assert.throws(
          () => compileQuery(parseQuery(text), typeOf),
          (e: unknown) => e instanceof QueryError && e.position === prefix.length && e.message.includes(`${n} is not a field`),
          text,
        );
      }),
      { numRuns: 200 },
    );
  });

  it('compileQuery: a metadata column is found by its own name only (no column named constructor or toString)', () => {
    for (const n of PROTOTYPE_NAMES) {
      assert.throws(
        () => compileQuery(parseQuery(`${n} eq 1`), () => undefined),
        (e: unknown) => e instanceof QueryError && e.position === 0,
      );
    }
    assert.match(compileQuery(parseQuery("id eq 'x'"), () => undefined).where.sql, /e\.id = \?/);
  });

  it('pick: a selected key of a map is copied as an own key, whatever its name, and nothing else appears', () => {
    const entity = JSON.parse('{"id": "X1", "labels": {"__proto__": "p", "constructor": "c", "a": "b"}}') as Doc;
    fc.assert(
      fc.property(name, (n) => {
        const out = pick(entity, [['labels', n]]);
        const labels = out.labels as Doc;
        assert.equal(Object.getPrototypeOf(labels), Object.prototype);
        const stored = Object.hasOwn(entity.labels as Doc, n);
        assert.deepEqual(
          JSON.parse(JSON.stringify(out)),
          JSON.parse(stored ? `{"id": "X1", "labels": {${JSON.stringify(n)}: "${n === '__proto__' ? 'p' : 'c'}"}}` : '{"id": "X1", "labels": {}}'),
        );
        assert.deepEqual(Object.keys(pick(entity, [[n]])), ['id']);
      }),
    );
  });

  it('mergePatch: a key of a patch is set as an own key, and the result keeps its prototype', () => {
    fc.assert(
      fc.property(name, fc.constantFrom('{"x": 1}', '"v"', '1', 'null'), (n, value) => {
        const patch = JSON.parse(`{"labels": {${JSON.stringify(n)}: ${value}}, ${JSON.stringify(n)}: ${value}}`) as Doc;
        const out = mergePatch({ name: 'a', labels: { a: 'b' } }, patch);
        assert.equal(Object.getPrototypeOf(out), Object.prototype);
        assert.equal(Object.getPrototypeOf(out.labels), Object.prototype);
        const expected =
          value === 'null' ? { name: 'a', labels: { a: 'b' } } : { name: 'a', labels: { a: 'b', [n]: JSON.parse(value) }, [n]: JSON.parse(value) };
        assert.equal(JSON.stringify(out), JSON.stringify(expected));
        assert.deepEqual(getPath(out, `labels.${n}`), value === 'null' ? undefined : getPath(expected as Doc, `labels.${n}`));
      }),
    );
  });

  it('jsonEqual and changedPaths: a key absent on one side is absent, not a member of Object.prototype', () => {
    for (const n of PROTOTYPE_NAMES) {
      const one = JSON.parse(`{${JSON.stringify(n)}: 1}`) as Doc;
      assert.equal(jsonEqual(one, { other: 1 }), false, n);
      assert.equal(jsonEqual(one, JSON.parse(`{${JSON.stringify(n)}: 1}`) as Doc), true, n);
      // null and absent are alike: setting an absent key to null changes nothing.
      assert.deepEqual(changedPaths({ a: 1 }, JSON.parse(`{"a": 1, ${JSON.stringify(n)}: null}`) as Doc), [], n);
      assert.deepEqual(changedPaths({ a: 1 }, { a: 1, ...one }), [[n]], n);
    }
  });
});
