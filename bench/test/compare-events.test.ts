import assert from 'node:assert/strict';
import { compareEvents } from '../lib/consistency.ts';

/** Outbox rows in outbox order: event id and the entity it is about. */
const outbox = (...rows: [string, string][]) => rows.map(([event_id, entity_id]) => ({ event_id, entity_id }));

describe('compareEvents (the events a reader saw against the outbox)', () => {
  const written = outbox(['e1', 'P1'], ['e2', 'P2'], ['e3', 'P1'], ['e4', 'P2']);

  it('takes every event once, each entity in the order written, whatever the order across entities', () => {
    assert.deepEqual(compareEvents(written, ['e2', 'e1', 'e4', 'e3']), { missing: [], twice: [], extra: [], reordered: [] });
  });

  it('names an entity whose events came in another order than written', () => {
    assert.deepEqual(compareEvents(written, ['e3', 'e1', 'e2', 'e4']).reordered, ['P1']);
  });

  it('names what is missing, what came twice and what the outbox does not hold', () => {
    const seen = compareEvents(written, ['e1', 'e2', 'e2', 'e4', 'x9']);
    assert.deepEqual(seen.missing, ['e3']);
    assert.deepEqual(seen.twice, ['e2 ×2']);
    assert.deepEqual(seen.extra, ['x9']);
    assert.deepEqual(seen.reordered, [], 'a missing event is not also a reordering');
  });
});
