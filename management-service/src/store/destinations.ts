import type { Knex } from 'knex';

export type Destination =
  | { tenant_id: string; kind: 'mqtt'; url: string; topic: string; updated_at: Date }
  | { tenant_id: string; kind: 'amqp'; url: string; exchange: string; routing_key: string; updated_at: Date };

type DestinationInput =
  { tenant_id: string; kind: 'mqtt'; url: string; topic: string } | { tenant_id: string; kind: 'amqp'; url: string; exchange: string; routing_key: string };

export async function listDestinations(db: Knex): Promise<Destination[]> {
  return db('event_destinations').select('*').orderBy('tenant_id');
}

export async function setDestination(db: Knex, d: DestinationInput): Promise<Destination> {
  const row = { topic: null, exchange: null, routing_key: null, ...d, updated_at: db.fn.now() };
  const [stored] = await db('event_destinations').insert(row).onConflict('tenant_id').merge().returning('*');
  return stored as Destination;
}

export async function removeDestination(db: Knex, tenantId: string): Promise<boolean> {
  return (await db('event_destinations').where({ tenant_id: tenantId }).delete()) > 0;
}
