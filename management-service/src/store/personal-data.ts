import type { Knex } from 'knex';
import type { EventEnvelope } from '../domain/events.ts';
import { CURRENT_COLUMNS, type EntityRow, type VersionRow } from './entities.ts';

/**
 * The reads of a personal-data export (docs/adr/0060-personal-data-export.md), each a bounded page
 * or a small list, meant to run in one snapshot (tenant-scope.ts openTenantSnapshot).
 */

export type VersionOfRow = VersionRow & { id: string };

/** The user's portfolios, deleted ones too, in id order (through the owner's index of migration 003). */
export async function ownedPortfolios(trx: Knex.Transaction, tenantId: string, userId: string): Promise<EntityRow[]> {
  return (await trx('entities')
    .select(CURRENT_COLUMNS)
    .where({ tenant_id: tenantId, type: 'portfolios' })
    .whereRaw(`platform_text(doc, '{owned_by_user_id}') = ?`, [userId])
    .orderBy('id')) as EntityRow[];
}

/** The user's suitability profiles (their assessments are part of them), deleted ones too, in id order. */
export async function profilesOfUser(trx: Knex.Transaction, tenantId: string, userId: string): Promise<EntityRow[]> {
  return (await trx('entities')
    .select(CURRENT_COLUMNS)
    .where({ tenant_id: tenantId, type: 'suitability-profiles' })
    .whereRaw(`platform_text(doc, '{user_id}') = ?`, [userId])
    .orderBy('id')) as EntityRow[];
}

/** A page of a parent's entities of one type after `afterId`, in id order (through entities_parent). */
export async function childrenPage(
  trx: Knex.Transaction,
  tenantId: string,
  parentId: string,
  type: string,
  afterId: string,
  limit: number,
): Promise<EntityRow[]> {
  return (await trx('entities')
    .select(CURRENT_COLUMNS)
    .where({ tenant_id: tenantId, parent_id: parentId, type })
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)) as EntityRow[];
}

/** Every version of these entities, by id then oldest first. */
export async function versionsOf(trx: Knex.Transaction, tenantId: string, ids: string[]): Promise<VersionOfRow[]> {
  if (ids.length === 0) return [];
  return (await trx('entity_versions')
    .select('id', 'version', 'doc', 'deleted', 'version_at', 'version_author_id')
    .where('tenant_id', tenantId)
    .whereIn('id', ids)
    .orderBy([{ column: 'id' }, { column: 'version' }])) as VersionOfRow[];
}

/** The portfolio's recorded withdrawals, as GET /events/withdraw/ answered them when recorded. */
export async function withdrawalsOf(trx: Knex.Transaction, tenantId: string, portfolioId: string): Promise<Record<string, unknown>[]> {
  const rows = (await trx('withdrawals')
    .select('portfolio_id', 'amount', 'currency', 'external_id', 'transaction_id', 'notification_event_id', 'recorded_at')
    .where({ tenant_id: tenantId, portfolio_id: portfolioId })
    .orderBy([{ column: 'recorded_at' }, { column: 'notification_event_id' }])) as (Record<string, unknown> & { recorded_at: Date })[];
  return rows.map(({ recorded_at, ...rest }) => ({ ...rest, recorded_datetime: recorded_at.toISOString() }));
}

/** The portfolio's instructions to the broker, settled or not, oldest first. */
export async function brokerInstructionsOf(trx: Knex.Transaction, tenantId: string, portfolioId: string): Promise<Record<string, unknown>[]> {
  return (await trx('broker_instructions')
    .select('id', 'kind', 'portfolio_id', 'transaction_id', 'optimization_id', 'amount', 'currency', 'orders', 'result', 'created_at', 'settled_at')
    .where({ tenant_id: tenantId, portfolio_id: portfolioId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])) as Record<string, unknown>[];
}

/** The requests sent to the optimizer for these optimizations, with what became of each result. */
export async function optimizationRequestsOf(trx: Knex.Transaction, tenantId: string, optimizationIds: string[]): Promise<Record<string, unknown>[]> {
  if (optimizationIds.length === 0) return [];
  return (await trx('optimization_requests')
    .select(
      'request_id',
      'optimization_id',
      'portfolio_id',
      'reason',
      'attempt',
      'sent_at',
      'inputs_digest',
      'timed_out_at',
      'result_at',
      'result_status',
      'outcome',
    )
    .where('tenant_id', tenantId)
    .whereIn('optimization_id', optimizationIds)
    .orderBy([{ column: 'optimization_id' }, { column: 'attempt' }])) as Record<string, unknown>[];
}

export type EventsPosition = { xid: string; seq: string };

/**
 * A page of the events clients were sent about these entities or any child of these portfolios,
 * in the feed's order (xid, seq), after `after`.
 */
export async function eventsAboutPage(
  trx: Knex.Transaction,
  tenantId: string,
  about: { entityIds: string[]; parentIds: string[] },
  after: EventsPosition | undefined,
  limit: number,
): Promise<{ envelope: EventEnvelope; xid: string; seq: string }[]> {
  const query = trx('outbox')
    .select('envelope', trx.raw('outbox.xid::text as xid'), trx.raw('outbox.seq::text as seq'))
    .where('tenant_id', tenantId)
    .whereNull('nats_subject')
    .where((q) => {
      q.whereIn('entity_id', about.entityIds);
      if (about.parentIds.length > 0) q.orWhereIn('entity_id', trx('entities').select('id').where('tenant_id', tenantId).whereIn('parent_id', about.parentIds));
    })
    .orderByRaw('outbox.xid, outbox.seq')
    .limit(limit);
  if (after) query.whereRaw('(outbox.xid, outbox.seq) > (?::xid8, ?::bigint)', [after.xid, after.seq]);
  return query;
}
