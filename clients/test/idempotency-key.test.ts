import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { newIdempotencyKey } from '../src/idempotency-key.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('client Idempotency-Key (pure)', () => {
  it('is a random UUID v4 where randomUUID exists', () => {
    const keys = new Set(Array.from({ length: 100 }, () => newIdempotencyKey()));
    assert.equal(keys.size, 100);
    for (const key of keys) assert.match(key, UUID_V4);
  });

  it('is made from getRandomValues where the page has no randomUUID (plain http): version and variant bits set, random otherwise', () => {
    const insecure = { getRandomValues: (array: Uint8Array) => webcrypto.getRandomValues(array) };
    const keys = new Set(Array.from({ length: 100 }, () => newIdempotencyKey(insecure)));
    assert.equal(keys.size, 100);
    for (const key of keys) assert.match(key, UUID_V4);
    // Every byte given ends up in the key, apart from the version and variant bits.
    const ones = { getRandomValues: (array: Uint8Array) => array.fill(0xff) };
    assert.equal(newIdempotencyKey(ones), 'ffffffff-ffff-4fff-bfff-ffffffffffff');
  });
});
