import type { Knex } from 'knex';
import { newId } from '@platform/shared';
import { InvalidField, type DuplicateValue } from '../domain/errors.ts';
import { entityKinds } from '../domain/entities/catalog.ts';
import type { EntityKind, Reference, WriteContext } from '../domain/entities/kind.ts';
import type { Owner } from '../domain/events.ts';
import type { Doc } from '../domain/merge.ts';
import { existingIds, firstVersion, insertAndUpdateEntity, insertEntity, nextVersion, updateEntity, type EntityRow } from '../store/entities.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';
import { recordEffects, type ExtraEvents } from './entity-effects.ts';

/** What an error calls an entity type: its kind's label (optimizations are no kind of the catalogue). */
const LABELS = new Map<string, string>([...entityKinds.map((kind): [string, string] => [kind.type, kind.label]), ['optimizations', 'optimization']]);

/** Every reference (that changed) must name an existing, undeleted entity of the right type in the tenant. */
async function checkReferences(trx: Knex.Transaction, tenantId: string, refs: Reference[]): Promise<void> {
  const existing = await existingIds(trx, tenantId, refs);
  const missing = refs.find((r) => !existing.has(`${r.type}:${r.id}`));
  if (missing) throw new InvalidField(missing.loc, `names no ${LABELS.get(missing.type) ?? missing.type} of this tenant`);
}

const changedReferences = (kind: EntityKind, before: Doc, after: Doc) => {
  const old = new Set(kind.references(before).map((r) => `${r.type}:${r.id}`));
  return kind.references(after).filter((r) => !old.has(`${r.type}:${r.id}`));
};

/** Stores `doc` (already through the kind's rules) as version 1 of a new entity, with its events; `byClient` when a client's POST asked for it. */
export async function writeNew(
  trx: Knex.Transaction,
  kind: EntityKind,
  tenant: TenantSettings,
  wctx: WriteContext,
  doc: Doc,
  options: { byClient?: boolean } = {},
): Promise<EntityRow> {
  const tenantId = wctx.principal.tenantId;
  await checkReferences(trx, tenantId, kind.references(doc));
  const id = newId(kind.letter);
  const entity = firstVersion({
    tenantId,
    type: kind.type,
    id,
    parentId: wctx.parent?.id ?? null,
    doc,
    access: kind.access(doc, id, wctx),
    now: wctx.now,
    author: wctx.principal.subject,
  });
  await insertEntity(trx, entity);
  await recordEffects(trx, kind, tenant, undefined, entity, wctx.now, undefined, options.byClient);
  return entity;
}

/**
 * Moves a locked entity to its next version holding `doc` (or deleted), with its events and a flow's `extra` ones;
 * `byClient` when a client's PATCH or DELETE asked for it (the kind's effects tell it from a flow's change); `owner`
 * when the flow read it with its lock (store/entities.ts lockEntityWithOwner).
 */
export async function writeNext(
  trx: Knex.Transaction,
  kind: EntityKind,
  tenant: TenantSettings,
  wctx: WriteContext,
  current: EntityRow,
  doc: Doc,
  options: { deleted?: boolean; extra?: ExtraEvents; byClient?: boolean; owner?: Owner } = {},
): Promise<EntityRow> {
  const deleted = options.deleted ?? false;
  await checkReferences(trx, current.tenant_id, changedReferences(kind, current.doc, doc));
  const next = nextVersion(current, doc, { now: wctx.now, author: wctx.principal.subject, deleted, access: kind.access(doc, current.id, wctx) });
  await updateEntity(trx, next);
  await recordEffects(trx, kind, tenant, current, next, wctx.now, options.extra, options.byClient, options.owner);
  return next;
}

/**
 * What writeNew and writeNext do, for a new entity (with the id given) and a locked one, with their references checked
 * in one query and both rows written in one deferred statement (docs/adr/0063-deposit-round-trips.md): a taken unique
 * value fails the transaction, at its next statement or its COMMIT, with `duplicate` of its DuplicateValue. The
 * effects of the new entity are recorded first, then those of the changed one.
 */
export async function writeNewAndNext(
  trx: Knex.Transaction,
  tenant: TenantSettings,
  wctx: WriteContext,
  created: { kind: EntityKind; id: string; doc: Doc },
  changed: { kind: EntityKind; current: EntityRow; doc: Doc; extra?: ExtraEvents; owner?: Owner },
  duplicate?: (error: DuplicateValue) => Error,
): Promise<{ created: EntityRow; next: EntityRow }> {
  const tenantId = wctx.principal.tenantId;
  const { current } = changed;
  await checkReferences(trx, tenantId, [...created.kind.references(created.doc), ...changedReferences(changed.kind, current.doc, changed.doc)]);
  const entity = firstVersion({
    tenantId,
    type: created.kind.type,
    id: created.id,
    parentId: wctx.parent?.id ?? null,
    doc: created.doc,
    access: created.kind.access(created.doc, created.id, wctx),
    now: wctx.now,
    author: wctx.principal.subject,
  });
  const next = nextVersion(current, changed.doc, {
    now: wctx.now,
    author: wctx.principal.subject,
    deleted: false,
    access: changed.kind.access(changed.doc, current.id, wctx),
  });
  await insertAndUpdateEntity(trx, entity, next, duplicate);
  await recordEffects(trx, created.kind, tenant, undefined, entity, wctx.now);
  await recordEffects(trx, changed.kind, tenant, current, next, wctx.now, changed.extra, false, changed.owner);
  return { created: entity, next };
}
