import type { Knex } from 'knex';
import { deferred } from './deferred.ts';
import { activeTraceparent } from '@platform/shared';
import type { EventEnvelope, OutboundEvent } from '../domain/events.ts';

/** Writes events in the caller's transaction: they exist exactly when the change does. */
export async function insertEvents(trx: Knex.Transaction, tenantId: string, events: OutboundEvent[]): Promise<void> {
  if (events.length === 0) return;
  await insertRows(
    trx,
    events.map((e) => ({
      tenant_id: tenantId,
      event_id: e.envelope.id,
      entity_id: e.entityId,
      subject: e.envelope.subject,
      action: e.envelope.action,
      envelope: e.envelope,
      created_at: e.envelope.created,
      nats_subject: null,
      traceparent: null,
    })),
  );
}

export type InternalMessage = { id: string; natsSubject: string; entityId: string; payload: object; created: string };

/** An internal message (not a tenant event) for the relay to publish on `natsSubject`, with `id` as Nats-Msg-Id. */
export async function insertMessage(trx: Knex.Transaction, tenantId: string, message: InternalMessage): Promise<void> {
  await insertMessages(trx, tenantId, [message]);
}

/** Internal messages in one insert (a batch of optimizer requests). */
export async function insertMessages(trx: Knex.Transaction, tenantId: string, messages: InternalMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await insertRows(
    trx,
    messages.map((message) => ({
      tenant_id: tenantId,
      event_id: message.id,
      entity_id: message.entityId,
      subject: message.natsSubject,
      action: 'message',
      envelope: message.payload,
      created_at: message.created,
      nats_subject: message.natsSubject,
      traceparent: null,
    })),
  );
}

type OutboxRow = {
  tenant_id: string;
  event_id: string;
  entity_id: string;
  subject: string;
  action: string;
  envelope: object;
  created_at: string;
  nats_subject: string | null;
  traceparent: string | null;
};

/**
 * A row's place in the feed (docs/adr/0002-event-feed-cursor.md): the writing transaction's id, or
 * the entity's last place if that is higher. A transaction takes its id at its first write, which
 * may come before it locks the entity (a request claims its Idempotency-Key first): its id can then
 * be older than that of a change of the entity committed before it, yet its events must come after.
 * Served by outbox_tenant_entity_order (migration 016).
 */
const FEED_POSITION = `greatest(pg_current_xact_id(), (select o.xid from outbox o where o.tenant_id = ? and o.entity_id = ? order by o.xid desc limit 1))`;

/** Inserts the rows and wakes the relay (NOTIFY is delivered at commit) in one statement. */
async function insertRows(trx: Knex.Transaction, rows: OutboxRow[]): Promise<void> {
  // The span active here is the request's or the consumed message's: the relay sends its trace on.
  const traceparent = activeTraceparent() ?? null;
  const insert = trx('outbox')
    .insert(rows.map((row) => ({ ...row, traceparent, xid: trx.raw(FEED_POSITION, [row.tenant_id, row.entity_id]) })))
    .toSQL();
  // Nothing waits for its answer: it leaves with the transaction's next statement (store/deferred.ts).
  await deferred(
    trx,
    trx.raw(`with inserted as (${insert.sql} returning 1) select pg_notify('outbox', '') where exists (select 1 from inserted)`, insert.bindings as never),
  );
}

/** A position in a tenant's event history: the writing transaction and the row. */
export type Cursor = { xid: string; seq: string };

/**
 * The place of the last event the retention removed (migration 020) when `after` lies before it:
 * events after that cursor are gone. Undefined when none was removed after it.
 */
export async function removedAfter(trx: Knex.Transaction, tenantId: string, after: Cursor): Promise<Cursor | undefined> {
  const row = await trx('outbox_retention_horizons')
    .select(trx.raw('xid::text as xid'), trx.raw('seq::text as seq'))
    .where('tenant_id', tenantId)
    .whereRaw('(?::xid8, ?::bigint) < (xid, seq)', [after.xid, after.seq])
    .first();
  return row as Cursor | undefined;
}

/**
 * Events after `after` in commit order, only from transactions older than every transaction
 * still running: one that commits late can then never be passed over (docs/adr/0002-event-feed-cursor.md).
 * `only` keeps the events of one subject, or about one entity.
 */
export async function eventsAfter(
  trx: Knex.Transaction,
  tenantId: string,
  after: Cursor | undefined,
  limit: number,
  only: { subject?: string; entityId?: string } = {},
): Promise<{ envelope: EventEnvelope; xid: string; seq: string }[]> {
  const query = trx('outbox')
    // Aliased as text for the cursor: the ordering and the comparison name the table's own columns
    // (xid8, bigint), since ORDER BY xid would sort the text alias and put 1000 before 999.
    .select('envelope', trx.raw('outbox.xid::text as xid'), trx.raw('outbox.seq::text as seq'))
    .where('tenant_id', tenantId)
    .whereNull('nats_subject')
    .whereRaw('outbox.xid < pg_snapshot_xmin(pg_current_snapshot())')
    .orderByRaw('outbox.xid, outbox.seq')
    .limit(limit);
  if (after) query.whereRaw('(outbox.xid, outbox.seq) > (?::xid8, ?::bigint)', [after.xid, after.seq]);
  if (only.subject) query.where('subject', only.subject);
  // Served by outbox_tenant_entity_order (migration 016).
  if (only.entityId) query.where('entity_id', only.entityId);
  return query;
}

/** One of `count` partitions of the outbox by tenant (docs/adr/0032-relay-partitions.md): a tenant's rows are all in one. */
export type RelayPartition = { index: number; count: number };

/** The partition of a row's tenant, from 0 to count - 1: a stable hash of the tenant id, the same on every replica. */
export const PARTITION_OF_TENANT = 'mod(hashtext(tenant_id)::bigint + 2147483648, ?)';

/** A batch of unpublished events of one partition for the relay, in outbox order, locked for this transaction only. */
export async function claimUnpublished(
  trx: Knex.Transaction,
  limit: number,
  partition: RelayPartition = { index: 0, count: 1 },
): Promise<
  { seq: string; tenant_id: string; event_id: string; entity_id: string; nats_subject: string | null; envelope: EventEnvelope; traceparent: string | null }[]
> {
  const query = trx('outbox')
    .select(trx.raw('seq::text as seq'), 'tenant_id', 'event_id', 'entity_id', 'nats_subject', 'envelope', 'traceparent')
    .whereNull('published_at');
  if (partition.count > 1) query.whereRaw(`${PARTITION_OF_TENANT} = ?`, [partition.count, partition.index]);
  // The column, not the text alias of the same name: as text, "10" sorts before "9".
  return query.orderBy('outbox.seq').limit(limit).forUpdate().skipLocked();
}

export async function markPublished(trx: Knex.Transaction, seqs: string[]): Promise<void> {
  await trx('outbox').whereIn('seq', seqs).update({ published_at: trx.fn.now() });
}
