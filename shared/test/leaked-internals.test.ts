import assert from 'node:assert/strict';
import { leakedInternals } from '@platform/test-support/fuzz/checks';

// The fuzz tests of both services fail on an error body that shows the server's internals; this is
// what that check recognises, and what it lets through.
describe('error bodies that show internals', () => {
  const leaks: [string, string][] = [
    ['a stack frame', 'TypeError: x is undefined\n    at handler (/srv/management-service/src/http/app.ts:12:5)'],
    ['a stack frame', 'failed in compile.ts:88:13'],
    ['database wording', 'duplicate key value violates unique constraint "entities_external_id"'],
    ['database wording', 'relation "entities" does not exist'],
    ['database wording', 'syntax error at or near "select"'],
    ['database wording', 'Binder Error: Referenced column "x" not found'],
    ['a server path', 'cannot read /work/main/node_modules/pg/lib/client.js'],
    ['an internal address', 'connect ECONNREFUSED 10.0.0.7:5432'],
    ['an internal address', 'NATS at 127.0.0.1:4222 does not answer'],
  ];
  for (const [kind, text] of leaks) {
    it(`finds ${kind} in ${JSON.stringify(text.slice(0, 40))}`, () => assert.equal(leakedInternals(text), kind));
  }

  it('lets the problems of the contract through', () => {
    for (const text of [
      '{"type":"about:blank","title":"Conflict","status":409,"detail":"external_id \'crm-1\' is taken","code":"duplicate_value"}',
      'Invalid query at position 12: expected "eq", found "select"',
      'The portfolio is archived; it pays out nothing.',
      "Unknown field 'PRICEX' at body.fields.0; allowed: ISIN, NAME, PRICE",
    ]) {
      assert.equal(leakedInternals(text), undefined, text);
    }
  });
});
