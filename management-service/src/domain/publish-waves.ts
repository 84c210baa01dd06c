/**
 * Cuts a batch of outbox rows, in outbox order, into waves in which no entity appears twice. The
 * relay publishes a wave's messages side by side and starts the next wave only once every message
 * of the wave is acknowledged: a message retried after a time-out (a NATS node or stream leader
 * changing) can then land after other entities' messages of its wave, never after a later message
 * of its own entity (docs/adr/0054-publish-waves.md). Without faults the stream order is the
 * outbox order, since each wave is sent in order on one connection.
 */
export function publishWaves<T extends { entity_id: string }>(rows: readonly T[]): T[][] {
  const waves: T[][] = [];
  let wave: T[] = [];
  let entities = new Set<string>();
  for (const row of rows) {
    if (entities.has(row.entity_id)) {
      waves.push(wave);
      wave = [];
      entities = new Set();
    }
    wave.push(row);
    entities.add(row.entity_id);
  }
  if (wave.length > 0) waves.push(wave);
  return waves;
}
