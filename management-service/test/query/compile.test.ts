import assert from 'node:assert/strict';
import { compileQuery } from '../../src/query/compile.ts';
import type { FieldType } from '../../src/query/fields.ts';
import { parseQuery } from '../../src/query/parser.ts';

const D = 'config.manager_settings.divest_amount';
const AMOUNT = "platform_numeric(e.doc, '{config,manager_settings,divest_amount}')";
const TYPES: Record<string, FieldType> = { [D]: 'number', name: 'string' };
const typeOf = (path: string[]): FieldType | undefined => TYPES[path.join('.')];
const where = (text: string) => compileQuery(parseQuery(text), typeOf).where;
/** How each `neq <value>` on the amount was compiled, in order. */
const neqForms = (sql: string) => [...sql.matchAll(new RegExp(`${AMOUNT.replace(/[()[\]{}]/g, '\\$&')} (is distinct from|<>) \\?`, 'g'))].map((m) => m[1]);

describe('query compiler: neq next to a term that holds a value', () => {
  it('writes the pending-withdrawals query as the predicate of its partial index: <> and not null', () => {
    const { sql, bindings } = where(`${D} neq 0 and ${D} neq null`);
    assert.equal(sql, `((${AMOUNT} <> ?::numeric) and not (${AMOUNT} is null))`);
    assert.deepEqual(bindings, ['0']);
    assert.deepEqual(neqForms(where(`${D} neq null and ${D} neq 0`).sql), ['<>']);
  });

  it('keeps is distinct from where nothing else in the conjunction holds a value at the path', () => {
    assert.deepEqual(neqForms(where(`${D} neq 0`).sql), ['is distinct from']);
    assert.deepEqual(neqForms(where(`${D} neq 0 or ${D} neq null`).sql), ['is distinct from']);
    assert.deepEqual(neqForms(where(`${D} neq 0 and (${D} neq null or name eq 'x')`).sql), ['is distinct from']);
    assert.deepEqual(neqForms(where(`${D} neq 0 and ${D} eq null`).sql), ['is distinct from']);
    assert.deepEqual(neqForms(where(`${D} neq 0 and name neq null`).sql), ['is distinct from']);
    // A neq holds no value: either may be null.
    assert.deepEqual(neqForms(where(`${D} neq 0 and ${D} neq 5`).sql), ['is distinct from', 'is distinct from']);
  });

  it('takes any comparison with a value as holding one, also from an enclosing conjunction', () => {
    for (const other of [`${D} gt 5`, `${D} eq 7`, `${D} in [1, 2]`, `${D} in [1 to 9]`]) {
      assert.deepEqual(neqForms(where(`${D} neq 0 and ${other}`).sql), ['<>'], other);
    }
    assert.deepEqual(neqForms(where(`(${D} neq 0 or name eq 'x') and ${D} neq null`).sql), ['<>']);
    assert.deepEqual(neqForms(where(`((${D} neq 0 and name eq 'x') or name eq 'y') and ${D} ge 1`).sql), ['<>']);
  });

  it('leaves a neq with a wildcard as it was', () => {
    assert.match(where("name neq 'a*' and name neq null").sql, /^\(not coalesce\(\(\(e\.doc #>> '\{name\}'\) like \? escape/);
  });
});

describe('query compiler: identifiers compared as stored', () => {
  const ids = (text: string) => compileQuery(parseQuery(text), (path) => (path.join('.') === 'email' ? 'string' : typeOf(path))).where;

  it('compares external_id values in NFC, and in the form the query holds for ids stored before', () => {
    const nfd = 'cafe\u0301';
    const eq = ids(`external_id eq '${nfd}'`);
    assert.equal(eq.sql, 'e.external_id = any(?::text[])');
    assert.deepEqual(eq.bindings, [['caf\u00e9', nfd]]);
    assert.deepEqual(ids(`external_id eq 'caf\u00e9'`).bindings, ['caf\u00e9'], 'an NFC value alone');
    assert.deepEqual(ids(`external_id in ['${nfd}', 'x']`).bindings, [['caf\u00e9', 'x', nfd]]);
    assert.deepEqual(ids(`external_id eq 'CRM-X'`).bindings, ['CRM-X'], 'case kept');
  });

  it('compares e-mails in lower case on both sides, wildcards included', () => {
    const eq = ids(`email eq 'Eve.S@EX.com'`);
    assert.equal(eq.sql, "(lower((e.doc #>> '{email}')) = ?::text)");
    assert.deepEqual(eq.bindings, ['eve.s@ex.com']);
    const like = ids(`email eq 'EVE.*'`);
    assert.match(like.sql, /^\(lower\(\(e\.doc #>> '\{email\}'\)\) like \? escape/);
    assert.deepEqual(like.bindings, ['eve.%']);
    assert.deepEqual(ids(`name eq 'Eve'`).bindings, ['Eve'], 'other fields keep their case');
  });
});
