import assert from 'node:assert/strict';
import { isId, newId, newUlid } from '../src/ids.ts';

describe('ids', () => {
  it('are the type letter followed by a ULID', () => {
    const id = newId('P');
    assert.match(id, /^P[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.ok(isId('P', id));
  });

  it('refuse the wrong letter, a bad ULID body and non-strings', () => {
    const id = newId('U');
    assert.equal(isId('P', id), false);
    assert.equal(isId('U', `U${'I'.repeat(26)}`), false);
    assert.equal(isId('U', id.slice(0, 20)), false);
    assert.equal(isId('U', 42), false);
  });

  it('are unique and sort by creation time', () => {
    const ids = Array.from({ length: 1000 }, () => newUlid());
    assert.equal(new Set(ids).size, 1000);
    assert.deepEqual([...ids].sort(), ids);
  });
});
