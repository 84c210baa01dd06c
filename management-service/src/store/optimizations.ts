import type { Knex } from 'knex';
import { CURRENT_COLUMNS, insertEntities, updateEntities, type EntityRow } from './entities.ts';

/**
 * The optimizations store (docs/adr/0021-optimizations.md): optimizations are entities of type `optimizations` under
 * their portfolio, written by the service's flows only (no kind of the entity catalogue), through the entities'
 * batched writers; beside them, the requests sent to the optimizer and the nightly batch's runs.
 */

/** The entity type of optimizations. */
export const OPTIMIZATIONS = 'optimizations';

/** Locks the portfolios for the caller's transaction, in id order (so that two batches never wait for each other in a circle). */
export async function lockPortfolios(trx: Knex.Transaction, tenantId: string, ids: string[]): Promise<EntityRow[]> {
  if (ids.length === 0) return [];
  return (await trx('entities')
    .select(CURRENT_COLUMNS)
    .where({ tenant_id: tenantId, type: 'portfolios' })
    .whereIn('id', ids)
    .orderBy('id')
    .forUpdate()) as EntityRow[];
}

/** Entities of one type by id, deleted ones included. */
export async function entitiesOfType(trx: Knex.Transaction, tenantId: string, type: string, ids: string[]): Promise<EntityRow[]> {
  if (ids.length === 0) return [];
  return (await trx('entities').select(CURRENT_COLUMNS).where({ tenant_id: tenantId, type }).whereIn('id', ids)) as EntityRow[];
}

/**
 * The optimizations of these portfolios that are still open: PENDING, waiting for execution, or a recommended SUCCESS
 * without an owner's choice. Through the index of the portfolios' children (entities_parent).
 */
export async function openOptimizations(trx: Knex.Transaction, tenantId: string, portfolioIds: string[]): Promise<EntityRow[]> {
  if (portfolioIds.length === 0) return [];
  return (await trx('entities')
    .select(CURRENT_COLUMNS)
    .where({ tenant_id: tenantId, type: OPTIMIZATIONS, deleted: false })
    .whereIn('parent_id', portfolioIds)
    .whereRaw(
      `(doc ->> 'status' = 'PENDING' or doc ->> 'execution_status' = 'PENDING'
        or (doc ->> 'status' = 'SUCCESS' and doc -> 'is_recommended' = 'true'::jsonb and coalesce(doc ->> 'owner_choice', '') = ''))`,
    )
    .orderBy('id')) as EntityRow[];
}

/** The optimization for the caller's transaction, locked when asked. */
export async function findOptimization(
  trx: Knex.Transaction,
  tenantId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<EntityRow | undefined> {
  const query = trx('entities').select(CURRENT_COLUMNS).where({ tenant_id: tenantId, type: OPTIMIZATIONS, id });
  if (options.forUpdate) query.forUpdate();
  return (await query.first()) as EntityRow | undefined;
}

/** The portfolio's newest optimization (by creation), if any. */
export async function latestOptimization(trx: Knex.Transaction, tenantId: string, portfolioId: string): Promise<EntityRow | undefined> {
  return (await trx('entities')
    .select(CURRENT_COLUMNS)
    .where({ tenant_id: tenantId, type: OPTIMIZATIONS, parent_id: portfolioId, deleted: false })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .first()) as EntityRow | undefined;
}

/** New optimizations as version 1, with their first versions, in one statement; a taken external_id is a 409. */
export const insertOptimizations = (trx: Knex.Transaction, tenantId: string, rows: EntityRow[]): Promise<void> =>
  insertEntities(trx, tenantId, OPTIMIZATIONS, rows);

/** Moves optimizations (locked, or read under their portfolio's lock) to the versions given, in one statement. */
export const updateOptimizations = (trx: Knex.Transaction, tenantId: string, rows: EntityRow[]): Promise<void> =>
  updateEntities(trx, tenantId, OPTIMIZATIONS, rows);

/** The robo-advised portfolios (not deleted) that name the policy, in id order. */
export async function portfoliosOfPolicy(trx: Knex.Transaction, tenantId: string, policyId: string): Promise<string[]> {
  const rows = await trx('entities as e')
    .select('e.id')
    .where({ 'e.tenant_id': tenantId, 'e.type': 'portfolios', 'e.deleted': false })
    // Written as the index entities_portfolio_policy of migration 009 is, so that it serves the lookup.
    .whereRaw(`platform_text(e.doc, '{config,manager_settings,policy_id}') = ?`, [policyId])
    .whereRaw(`e.doc #>> '{config,manager}' like 'ROBO_ADVISOR%'`)
    .orderBy('e.id');
  return rows.map((r: { id: string }) => r.id);
}

/** A page of the tenant's ACTIVE robo-advised portfolios after `afterId`, in id order (the nightly batch). */
export async function activeRoboPortfolios(trx: Knex.Transaction, tenantId: string, afterId: string, limit: number): Promise<string[]> {
  const rows = await trx('entities')
    .select('id')
    .where({ tenant_id: tenantId, type: 'portfolios', deleted: false })
    .where('id', '>', afterId)
    .whereRaw(`doc ->> 'status' = 'ACTIVE' and doc #>> '{config,manager}' like 'ROBO_ADVISOR%'`)
    .orderBy('id')
    .limit(limit);
  return rows.map((r: { id: string }) => r.id);
}

// ------------------------------------------------------------------ optimizer requests (migration 009)

export type RequestRow = {
  request_id: string;
  tenant_id: string;
  optimization_id: string;
  portfolio_id: string;
  reason: string;
  attempt: number;
  sent_at: Date;
  inputs_digest: string;
  timed_out_at: Date | null;
  result_at: Date | null;
  result_status: string | null;
  outcome: 'STORED' | 'LATE' | 'STALE' | null;
};

export type NewRequest = Pick<RequestRow, 'request_id' | 'tenant_id' | 'optimization_id' | 'portfolio_id' | 'reason' | 'attempt' | 'inputs_digest'> & {
  sent_at: string;
};

export async function insertRequests(trx: Knex.Transaction, rows: NewRequest[]): Promise<void> {
  if (rows.length > 0) await trx('optimization_requests').insert(rows);
}

/** The request, locked for the caller's transaction (results of one request are handled one at a time). */
export async function lockRequest(trx: Knex.Transaction, tenantId: string, requestId: string): Promise<RequestRow | undefined> {
  return (await trx('optimization_requests').select('*').where({ tenant_id: tenantId, request_id: requestId }).forUpdate().first()) as RequestRow | undefined;
}

/** The request still waits for its result and no worker holds it: locked, or undefined. */
export async function lockWaitingRequest(trx: Knex.Transaction, tenantId: string, requestId: string): Promise<RequestRow | undefined> {
  return (await trx('optimization_requests')
    .select('*')
    .where({ tenant_id: tenantId, request_id: requestId })
    .whereNull('result_at')
    .whereNull('timed_out_at')
    .forUpdate()
    .skipLocked()
    .first()) as RequestRow | undefined;
}

export async function markAnswered(
  trx: Knex.Transaction,
  tenantId: string,
  requestId: string,
  answer: { result_at: string; result_status: string; outcome: 'STORED' | 'LATE' | 'STALE' },
): Promise<void> {
  await trx('optimization_requests').where({ tenant_id: tenantId, request_id: requestId }).update(answer);
}

export async function markTimedOut(trx: Knex.Transaction, tenantId: string, requestId: string, at: string): Promise<void> {
  await trx('optimization_requests').where({ tenant_id: tenantId, request_id: requestId }).update({ timed_out_at: at });
}

/** How many requests of the optimization went unanswered until the time-out, and its newest attempt number. */
export async function attemptsOf(trx: Knex.Transaction, tenantId: string, optimizationId: string): Promise<{ timedOut: number; last: number }> {
  const [row] = (await trx('optimization_requests')
    .where({ tenant_id: tenantId, optimization_id: optimizationId })
    .select(trx.raw('count(timed_out_at)::int as timed_out'), trx.raw('coalesce(max(attempt), 0)::int as last'))) as { timed_out: number; last: number }[];
  return { timedOut: row!.timed_out, last: row!.last };
}

/** Requests of every tenant waiting for their result since before `sentBefore`, oldest first (read as the owning role). */
export async function overdueRequests(db: Knex | Knex.Transaction, sentBefore: Date, limit: number): Promise<{ tenant_id: string; request_id: string }[]> {
  return db('optimization_requests')
    .select('tenant_id', 'request_id')
    .whereNull('result_at')
    .whereNull('timed_out_at')
    .where('sent_at', '<', sentBefore)
    .orderBy('sent_at')
    .limit(limit);
}

/** Any number that all replicas agree on: the lock that lets one replica at a time handle overdue requests. */
const TIMEOUT_LOCK = 720_415;

/** Takes the time-out job's lock for the caller's transaction; false when another replica holds it. */
export async function tryTimeoutLock(trx: Knex.Transaction): Promise<boolean> {
  const { rows } = await trx.raw('select pg_try_advisory_xact_lock(?) as mine', [TIMEOUT_LOCK]);
  return rows[0].mine === true;
}

// ------------------------------------------------------------------ the nightly batch (migration 009)

/** Any number that all replicas agree on: the lock that lets one replica run the nightly batch. */
const NIGHTLY_LOCK = 720_414;

/** Takes the nightly batch's lock for the caller's transaction; false when another replica holds it. */
export async function tryNightlyLock(trx: Knex.Transaction): Promise<boolean> {
  const { rows } = await trx.raw('select pg_try_advisory_xact_lock(?) as mine', [NIGHTLY_LOCK]);
  return rows[0].mine === true;
}

/** Whether the batch of this UTC day (YYYY-MM-DD) has run. */
export async function nightlyRunDone(trx: Knex.Transaction, day: string): Promise<boolean> {
  return (await trx('optimizer_nightly_runs').select('day').where({ day }).first()) !== undefined;
}

export async function recordNightlyRun(
  trx: Knex.Transaction,
  run: { day: string; started_at: string; finished_at: string; tenants: number; portfolios: number; requested: number },
): Promise<void> {
  await trx('optimizer_nightly_runs').insert(run);
}
