import type { Knex } from 'knex';
import type { Doc } from '../domain/merge.ts';
import { DuplicateValue } from '../domain/errors.ts';

/** An entity's current state as stored. */
export type EntityRow = {
  tenant_id: string;
  id: string;
  type: string;
  parent_id: string | null;
  version: number;
  doc: Doc;
  deleted: boolean;
  readable_by: string[];
  modifiable_by: string[];
  created_at: Date;
  version_at: Date;
  version_author_id: string | null;
};

export type VersionRow = { version: number; doc: Doc; deleted: boolean; version_at: Date; version_author_id: string | null };

const CURRENT = ['tenant_id', 'id', 'type', 'parent_id', 'version', 'doc', 'deleted', 'readable_by', 'modifiable_by', 'created_at', 'version_at', 'version_author_id'];

export async function findEntity(
  trx: Knex.Transaction,
  where: { tenantId: string; type: string; id: string; parentId?: string },
  options: { forUpdate?: boolean } = {},
): Promise<EntityRow | undefined> {
  const query = trx('entities').select(CURRENT).where({ tenant_id: where.tenantId, type: where.type, id: where.id });
  if (where.parentId !== undefined) query.where({ parent_id: where.parentId });
  if (options.forUpdate) query.forUpdate();
  return (await query.first()) as EntityRow | undefined;
}

/** Unique indexes of migrations/002 and the field each protects. */
const UNIQUE_FIELDS: Record<string, string> = {
  entities_external_id: 'external_id',
  entities_user_email: 'email',
  entities_user_phone: 'phone',
};

async function translateUnique<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    const e = error as { code?: string; constraint?: string };
    const field = e.code === '23505' && e.constraint ? UNIQUE_FIELDS[e.constraint] : undefined;
    if (field) throw new DuplicateValue(field);
    throw error;
  }
}

async function appendVersion(trx: Knex.Transaction, row: EntityRow): Promise<void> {
  await trx('entity_versions').insert({
    tenant_id: row.tenant_id,
    id: row.id,
    version: row.version,
    doc: row.doc,
    deleted: row.deleted,
    version_at: row.version_at,
    version_author_id: row.version_author_id,
  });
}

/** Stores a new entity as version 1. */
export async function insertEntity(trx: Knex.Transaction, row: EntityRow): Promise<void> {
  await translateUnique(trx('entities').insert(row));
  await appendVersion(trx, row);
}

/** Moves an entity to its next version (the caller holds the row lock and bumped `version`). */
export async function updateEntity(trx: Knex.Transaction, row: EntityRow): Promise<void> {
  const { tenant_id, id, ...changes } = row;
  await translateUnique(trx('entities').where({ tenant_id, id }).update(changes));
  await appendVersion(trx, row);
}

export async function findVersion(trx: Knex.Transaction, tenantId: string, id: string, version: number): Promise<VersionRow | undefined> {
  const row = await trx('entity_versions').select('version', 'doc', 'deleted', 'version_at', 'version_author_id').where({ tenant_id: tenantId, id, version }).first();
  return row as VersionRow | undefined;
}

/** Versions `from`..`to` inclusive, oldest first. */
export async function listVersions(trx: Knex.Transaction, tenantId: string, id: string, from: number, to: number): Promise<VersionRow[]> {
  return trx('entity_versions')
    .select('version', 'doc', 'deleted', 'version_at', 'version_author_id')
    .where({ tenant_id: tenantId, id })
    .whereBetween('version', [from, to])
    .orderBy('version');
}

/** Of the given ids, those that exist (not deleted) with the given type, as `type:id`. */
export async function existingIds(trx: Knex.Transaction, tenantId: string, refs: { id: string; type: string }[]): Promise<Set<string>> {
  if (refs.length === 0) return new Set();
  const rows = await trx('entities')
    .select('id', 'type')
    .where({ tenant_id: tenantId, deleted: false })
    .whereIn('id', [...new Set(refs.map((r) => r.id))]);
  return new Set(rows.map((r: { id: string; type: string }) => `${r.type}:${r.id}`));
}

export async function tenantBrokerIntegration(trx: Knex.Transaction, tenantId: string): Promise<'CLIENT' | 'SERVICE'> {
  const row = await trx('tenants').select('broker_integration').where({ id: tenantId }).first();
  return row.broker_integration;
}
