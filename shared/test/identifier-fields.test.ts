import assert from 'node:assert/strict';
import { decodeUtf8 } from '../src/http/body.ts';
import { normaliseIdentifierFields } from '../src/http/identifier-fields.ts';
import { ProblemError } from '../src/problem.ts';

describe('identifier fields of a request body', () => {
  const names = new Set(['external_id', 'email']);

  it('are put into NFC in place at any depth; other fields are left as sent', () => {
    const body = { external_id: 'cafe\u0301', first_name: 'cafe\u0301', data: { external_id: 'Zoe\u0308' }, items: [{ email: 'e\u0301@x.com' }] };
    assert.deepEqual(normaliseIdentifierFields(body, names), []);
    assert.deepEqual(body, { external_id: 'caf\u00e9', first_name: 'cafe\u0301', data: { external_id: 'Zo\u00eb' }, items: [{ email: '\u00e9@x.com' }] });
  });

  it('are refused with the loc of each, null and non-strings passed to the contract', () => {
    const body = { external_id: 'crm\u200b1', data: { external_id: 'x ' }, items: [{ email: null }, { external_id: 3 }] };
    const issues = normaliseIdentifierFields(body, names);
    assert.deepEqual(
      issues.map((i) => [i.loc, i.type]),
      [
        [['body', 'external_id'], 'identifier'],
        [['body', 'data', 'external_id'], 'identifier'],
      ],
    );
    assert.equal(body.external_id, 'crm\u200b1', 'a refused value is left as sent');
  });
});

describe('request bodies as UTF-8', () => {
  it('decode when they are UTF-8, a byte-order mark kept as sent', () => {
    assert.equal(decodeUtf8(Buffer.from('{"a":"caf\u00e9"}')), '{"a":"caf\u00e9"}');
    assert.equal(decodeUtf8(Buffer.from('\ufeffinstrument_id')), '\ufeffinstrument_id');
  });

  it('are a 400 invalid_encoding naming the offset and line of the first bad sequence', () => {
    for (const [bytes, offset, line] of [
      [Buffer.concat([Buffer.from('a\nb\ncaf'), Buffer.from([0xe9]), Buffer.from('!')]), 7, 3],
      [Buffer.from([0x61, 0xff, 0x62]), 1, 1],
      [Buffer.from([0x61, 0xe2, 0x82]), 1, 1],
      [Buffer.from([0xed, 0xa0, 0x80]), 0, 1],
    ] as const) {
      assert.throws(
        () => decodeUtf8(bytes),
        (error: unknown) => {
          assert.ok(error instanceof ProblemError);
          assert.equal(error.status, 400);
          assert.equal(error.code, 'invalid_encoding');
          assert.match(error.detail, new RegExp(`offset ${offset} \\(line ${line}\\)`));
          return true;
        },
      );
    }
  });
});
