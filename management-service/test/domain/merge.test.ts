import assert from 'node:assert/strict';
import { getPath, jsonEqual, mergePatch } from '../../src/domain/merge.ts';

describe('merge patch (RFC 7396)', () => {
  it('merges objects key by key, removes null keys, replaces lists', () => {
    const target = { a: 1, b: { c: 2, d: 3 }, tags: ['x', 'y'] };
    assert.deepEqual(mergePatch(target, { b: { c: null, e: 4 }, tags: ['z'] }), { a: 1, b: { d: 3, e: 4 }, tags: ['z'] });
    assert.deepEqual(target, { a: 1, b: { c: 2, d: 3 }, tags: ['x', 'y'] }, 'the target is not changed');
  });

  it('replaces the configured value objects whole', () => {
    const target = { portfolio: { $EUR: 10, IE00B4L5Y983: 3 }, config: { manager_settings: { active: true, policy_id: 'Y1' } } };
    const merged = mergePatch(target, { portfolio: { $EUR: 12 }, config: { manager_settings: { active: false } } }, new Set(['portfolio']));
    assert.deepEqual(merged, { portfolio: { $EUR: 12 }, config: { manager_settings: { active: false, policy_id: 'Y1' } } });
  });

  it('reads dotted paths and compares JSON regardless of key order', () => {
    assert.equal(getPath({ a: { b: { c: 5 } } }, 'a.b.c'), 5);
    assert.equal(getPath({ a: 1 }, 'a.b'), undefined);
    assert.ok(jsonEqual({ a: [1, { b: 2, c: 3 }] }, { a: [1, { c: 3, b: 2 }] }));
    assert.ok(!jsonEqual({ a: [1, 2] }, { a: [2, 1] }));
    assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: null }));
  });
});
