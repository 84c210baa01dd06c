import assert from 'node:assert/strict';
import { publishWaves } from '../../src/domain/publish-waves.ts';

const rows = (entities: string) => [...entities].map((entity_id, i) => ({ entity_id, seq: i }));
const shape = (waves: { entity_id: string }[][]) => waves.map((w) => w.map((r) => r.entity_id).join(''));

describe('publish waves', () => {
  it('keeps a batch of distinct entities in one wave', () => {
    assert.deepEqual(shape(publishWaves(rows('abcd'))), ['abcd']);
  });

  it('starts a new wave where an entity comes again, so each entity is at most once per wave', () => {
    assert.deepEqual(shape(publishWaves(rows('abacbbd'))), ['ab', 'acb', 'bd']);
  });

  it('keeps the outbox order: the waves laid end to end are the batch', () => {
    const batch = rows('aabcabcddcba');
    const waves = publishWaves(batch);
    assert.deepEqual(waves.flat(), batch);
    for (const wave of waves) assert.equal(new Set(wave.map((r) => r.entity_id)).size, wave.length);
  });

  it('gives no wave for an empty batch', () => {
    assert.deepEqual(publishWaves([]), []);
  });
});
