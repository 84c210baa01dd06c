import type { Knex } from 'knex';
import type { Doc } from '../domain/merge.ts';
import type { DuplicateValue } from '../domain/errors.ts';
import { deferred } from './deferred.ts';
import { translateUnique, uniqueViolation } from './unique-violations.ts';

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

export const CURRENT_COLUMNS = [
  'tenant_id',
  'id',
  'type',
  'parent_id',
  'version',
  'doc',
  'deleted',
  'readable_by',
  'modifiable_by',
  'created_at',
  'version_at',
  'version_author_id',
];

export async function findEntity(
  trx: Knex.Transaction,
  where: { tenantId: string; type: string; id: string; parentId?: string },
  options: { forUpdate?: boolean } = {},
): Promise<EntityRow | undefined> {
  const query = trx('entities').select(CURRENT_COLUMNS).where({ tenant_id: where.tenantId, type: where.type, id: where.id });
  if (where.parentId !== undefined) query.where({ parent_id: where.parentId });
  if (options.forUpdate) query.forUpdate();
  return (await query.first()) as EntityRow | undefined;
}

/** A user as the events name it: id and external_id. */
export type OwnerRow = { id: string; external_id: string | null };

/**
 * The entity, locked for the caller's transaction, with the user its `owned_by_user_id` names (read, not locked; deleted
 * ones too, as findEntity reads them) in the same statement: a flow that emits events naming the owner reads it in the
 * round trip of the lock (docs/adr/0063-deposit-round-trips.md).
 */
export async function lockEntityWithOwner(
  trx: Knex.Transaction,
  where: { tenantId: string; type: string; id: string },
): Promise<{ row: EntityRow; owner: OwnerRow | undefined } | undefined> {
  const found = (await trx('entities as e')
    .select(CURRENT_COLUMNS.map((c) => `e.${c}`))
    .select(
      trx.raw(
        `(select jsonb_build_object('id', u.id, 'external_id', u.doc -> 'external_id') from entities u
           where u.tenant_id = e.tenant_id and u.type = 'users' and u.id = e.doc ->> 'owned_by_user_id') as owner`,
      ),
    )
    .where({ 'e.tenant_id': where.tenantId, 'e.type': where.type, 'e.id': where.id })
    .forUpdate('e')
    .first()) as (EntityRow & { owner: OwnerRow | null }) | undefined;
  if (!found) return undefined;
  const { owner, ...row } = found;
  return { row, owner: owner ?? undefined };
}

/** Unique indexes of migrations/002_entities.sql (e-mail: 018_user_email_any_case.sql) and the field each protects. */
const UNIQUE_FIELDS: Record<string, string> = {
  entities_external_id: 'external_id',
  entities_user_email_any_case: 'email',
  entities_user_phone: 'phone',
};

/** The columns of a stored entity in the order the writers give them. */
const WRITTEN = 'tenant_id, id, type, parent_id, version, doc, deleted, readable_by, modifiable_by, created_at, version_at, version_author_id';

/** Every writer records the state it leaves in entity_versions in the same statement (the `changed` rows it returns). */
const VERSION_OF = `insert into entity_versions (tenant_id, id, version, doc, deleted, version_at, version_author_id)
  select tenant_id, id, version, doc, deleted, version_at, version_author_id from changed`;

/** Stores a new entity as version 1 (the entity and its first version in one statement). */
export async function insertEntity(trx: Knex.Transaction, row: EntityRow): Promise<void> {
  await translateUnique(
    trx.raw(
      `with changed as (
         insert into entities (${WRITTEN})
         values (?, ?, ?, ?, ?, ?::jsonb, ?, ?::text[], ?::text[], ?, ?, ?) returning *)
       ${VERSION_OF}`,
      [
        row.tenant_id,
        row.id,
        row.type,
        row.parent_id,
        row.version,
        JSON.stringify(row.doc),
        row.deleted,
        row.readable_by,
        row.modifiable_by,
        row.created_at,
        row.version_at,
        row.version_author_id,
      ],
    ),
    UNIQUE_FIELDS,
  );
}

/** Moves an entity to its next version (the caller holds the row lock and bumped `version`). */
export async function updateEntity(trx: Knex.Transaction, row: EntityRow): Promise<void> {
  await translateUnique(
    trx.raw(
      `with changed as (
         update entities set version = ?, doc = ?::jsonb, deleted = ?, readable_by = ?::text[], modifiable_by = ?::text[], version_at = ?, version_author_id = ?
          where tenant_id = ? and id = ? returning *)
       ${VERSION_OF}`,
      [row.version, JSON.stringify(row.doc), row.deleted, row.readable_by, row.modifiable_by, row.version_at, row.version_author_id, row.tenant_id, row.id],
    ),
    UNIQUE_FIELDS,
  );
}

/**
 * A new entity as version 1 and the next version of another (locked by the caller, `version` bumped) in one statement,
 * both recorded in entity_versions: a deposit's CASH transaction and its portfolio's cash
 * (docs/adr/0063-deposit-round-trips.md). Nothing waits for its answer: it is deferred (store/deferred.ts), leaving with
 * the transaction's next statement, at the latest its COMMIT. A unique violation fails the whole statement, and the
 * transaction with `duplicate` of the DuplicateValue it means.
 */
export async function insertAndUpdateEntity(
  trx: Knex.Transaction,
  created: EntityRow,
  next: EntityRow,
  duplicate: (error: DuplicateValue) => Error = (error) => error,
): Promise<void> {
  await deferred(
    trx,
    trx.raw(
      `with inserted as (
         insert into entities (${WRITTEN})
         values (?, ?, ?, ?, ?, ?::jsonb, ?, ?::text[], ?::text[], ?, ?, ?) returning *),
       updated as (
         update entities set version = ?, doc = ?::jsonb, deleted = ?, readable_by = ?::text[], modifiable_by = ?::text[], version_at = ?, version_author_id = ?
          where tenant_id = ? and id = ? returning *),
       changed as (select * from inserted union all select * from updated)
       ${VERSION_OF}`,
      [
        created.tenant_id,
        created.id,
        created.type,
        created.parent_id,
        created.version,
        JSON.stringify(created.doc),
        created.deleted,
        created.readable_by,
        created.modifiable_by,
        created.created_at,
        created.version_at,
        created.version_author_id,
        next.version,
        JSON.stringify(next.doc),
        next.deleted,
        next.readable_by,
        next.modifiable_by,
        next.version_at,
        next.version_author_id,
        next.tenant_id,
        next.id,
      ],
    ),
    (error) => {
      const violation = uniqueViolation(error, UNIQUE_FIELDS);
      return violation && duplicate(violation);
    },
  );
}

// A batch goes to Postgres as one JSON array of rows (one bind parameter whatever its size), read back by jsonb_to_recordset.
const asRecords = (rows: EntityRow[]) =>
  JSON.stringify(
    rows.map((r) => ({
      id: r.id,
      parent_id: r.parent_id,
      version: r.version,
      doc: r.doc,
      deleted: r.deleted,
      readable_by: r.readable_by,
      modifiable_by: r.modifiable_by,
      created_at: r.created_at.toISOString(),
      version_at: r.version_at.toISOString(),
      version_author_id: r.version_author_id,
    })),
  );

const RECORDS = `jsonb_to_recordset(?::jsonb) as v(id text, parent_id text, version integer, doc jsonb, deleted boolean, readable_by text[],
  modifiable_by text[], created_at timestamptz, version_at timestamptz, version_author_id text)`;

/** New entities of one type as version 1, with their first versions, in one statement whatever their number. */
export async function insertEntities(trx: Knex.Transaction, tenantId: string, type: string, rows: EntityRow[]): Promise<void> {
  if (rows.length === 0) return;
  await translateUnique(
    trx.raw(
      `with changed as (
         insert into entities (${WRITTEN})
         select ?, v.id, ?, v.parent_id, v.version, v.doc, v.deleted, v.readable_by, v.modifiable_by, v.created_at, v.version_at, v.version_author_id
           from ${RECORDS} returning *)
       ${VERSION_OF}`,
      [tenantId, type, asRecords(rows)],
    ),
    UNIQUE_FIELDS,
  );
}

/**
 * Moves entities of one type to the versions given, in one statement. The caller holds their rows' locks or their
 * parent's; a row whose stored version is not the one before its new one is left as it is.
 */
export async function updateEntities(trx: Knex.Transaction, tenantId: string, type: string, rows: EntityRow[]): Promise<void> {
  if (rows.length === 0) return;
  await translateUnique(
    trx.raw(
      `with changed as (
         update entities e set version = v.version, doc = v.doc, deleted = v.deleted, readable_by = v.readable_by, modifiable_by = v.modifiable_by,
                version_at = v.version_at, version_author_id = v.version_author_id
           from ${RECORDS}
          where e.tenant_id = ? and e.type = ? and e.id = v.id and e.version = v.version - 1
          returning e.*)
       ${VERSION_OF}`,
      [asRecords(rows), tenantId, type],
    ),
    UNIQUE_FIELDS,
  );
}

/** Who may read and modify an entity besides the tenant's machine clients. */
export type Access = Pick<EntityRow, 'readable_by' | 'modifiable_by'>;

/** Version 1 of a new entity, written at `now` by `author` (null: the service). */
export function firstVersion(input: {
  tenantId: string;
  type: string;
  id: string;
  parentId: string | null;
  doc: Doc;
  access: Access;
  now: string;
  author: string | null;
}): EntityRow {
  const at = new Date(input.now);
  return {
    tenant_id: input.tenantId,
    id: input.id,
    type: input.type,
    parent_id: input.parentId,
    version: 1,
    doc: input.doc,
    deleted: false,
    readable_by: input.access.readable_by,
    modifiable_by: input.access.modifiable_by,
    created_at: at,
    version_at: at,
    version_author_id: input.author,
  };
}

/** The version after `current` holding `doc`, written at `now` by `author`; deletion and access as given, else as they were. */
export function nextVersion(current: EntityRow, doc: Doc, change: { now: string; author: string | null; deleted?: boolean; access?: Access }): EntityRow {
  return {
    ...current,
    version: current.version + 1,
    doc,
    deleted: change.deleted ?? current.deleted,
    readable_by: change.access?.readable_by ?? current.readable_by,
    modifiable_by: change.access?.modifiable_by ?? current.modifiable_by,
    version_at: new Date(change.now),
    version_author_id: change.author,
  };
}

export async function findVersion(trx: Knex.Transaction, tenantId: string, id: string, version: number): Promise<VersionRow | undefined> {
  const row = await trx('entity_versions')
    .select('version', 'doc', 'deleted', 'version_at', 'version_author_id')
    .where({ tenant_id: tenantId, id, version })
    .first();
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

/** The id of the tenant's entity of `type` with this external_id, deleted or not (an external_id stays taken). */
export async function idByExternalId(trx: Knex.Transaction, tenantId: string, type: string, externalId: string): Promise<string | undefined> {
  const row = (await trx('entities').select('id').where({ tenant_id: tenantId, type, external_id: externalId }).first()) as { id: string } | undefined;
  return row?.id;
}

/** The entities with these ids (not deleted), of any type. */
export async function findEntities(trx: Knex.Transaction, tenantId: string, ids: string[]): Promise<EntityRow[]> {
  if (ids.length === 0) return [];
  return (await trx('entities').select(CURRENT_COLUMNS).where({ tenant_id: tenantId, deleted: false }).whereIn('id', ids)) as EntityRow[];
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
