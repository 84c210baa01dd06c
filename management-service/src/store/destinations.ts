import type { Knex } from 'knex';

export type Destination = { tenant_id: string; kind: 'mqtt'; url: string; topic: string; updated_at: Date };

export async function listDestinations(db: Knex): Promise<Destination[]> {
  return db('event_destinations').select('*').orderBy('tenant_id');
}

export async function setDestination(db: Knex, d: { tenant_id: string; kind: 'mqtt'; url: string; topic: string }): Promise<Destination> {
  const [row] = await db('event_destinations').insert({ ...d, updated_at: db.fn.now() }).onConflict('tenant_id').merge().returning('*');
  return row as Destination;
}

export async function removeDestination(db: Knex, tenantId: string): Promise<boolean> {
  return (await db('event_destinations').where({ tenant_id: tenantId }).delete()) > 0;
}
