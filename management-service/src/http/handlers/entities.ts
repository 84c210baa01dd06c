import type { Knex } from 'knex';
import { isId, type HandlerContext, type OperationHandler } from '@platform/shared';
import type { Principal } from '../../domain/principal.ts';
import { EntityNotFound, NotPermitted, StateConflict } from '../../domain/errors.ts';
import type { EntityKind, WriteContext } from '../../domain/entities/kind.ts';
import { checkIfMatch } from '../../domain/if-match.ts';
import { mustBeCustomersChange } from '../../domain/customer-rights.ts';
import { jsonEqual, mergePatch, type Doc } from '../../domain/merge.ts';
import { canRead, mustBeMachine, mustModify } from '../../domain/permissions.ts';
import { versionPatch } from '../../domain/versions.ts';
import { findEntity, findVersion, listVersions, type EntityRow } from '../../store/entities.ts';
import { inTenant, readInTenant, type TenantRunner, type TenantSettings } from '../../store/tenant-scope.ts';
import { writeNew, writeNext } from '../../flows/entity-writes.ts';
import { presentEntity, presentVersion } from '../present.ts';
import { embedFields, embedded } from '../embed.ts';
import type { PostHandler } from '../idempotency.ts';

type Ctx = HandlerContext<Principal>;

/**
 * Create, read, update, delete and version history for every entity type, one transaction per
 * request: load (and lock) → pure rules of the kind → check references → write the next version.
 * Creates are POSTs: they run in the transaction their Idempotency-Key shares.
 */
export function entityHandlers(db: Knex, kinds: EntityKind[]): { posts: Record<string, PostHandler>; others: Record<string, OperationHandler<Principal>> } {
  const posts: Record<string, PostHandler> = {};
  const handlers: Record<string, OperationHandler<Principal>> = {};
  for (const kind of kinds) {
    const ops = kind.operations;
    posts[ops.create] = (ctx, run) => create(kind, ctx, run);
    handlers[ops.get] = (ctx) => read(db, kind, ctx);
    handlers[ops.update] = (ctx) => change(db, kind, ctx, 'update');
    handlers[ops.delete] = (ctx) => change(db, kind, ctx, 'delete');
    handlers[ops.versions] = (ctx) => versions(db, kind, ctx);
  }
  return { posts, others: handlers };
}

/** The entity of the path, 404 for a wrong letter, another tenant's id or an unknown one. */
async function load(trx: Knex.Transaction, kind: EntityKind, ctx: Ctx, forUpdate: boolean): Promise<EntityRow> {
  const id = ctx.params[kind.idParam]!;
  const parentId = kind.parent ? ctx.params[kind.parent.idParam]! : undefined;
  if (!isId(kind.letter, id) || (kind.parent && !isId(kind.parent.letter, parentId))) throw new EntityNotFound(kind.label);
  const row = await findEntity(trx, { tenantId: ctx.principal.tenantId, type: kind.type, id, parentId }, { forUpdate });
  if (!row) throw new EntityNotFound(kind.label);
  return row;
}

async function loadParent(trx: Knex.Transaction, kind: EntityKind, ctx: Ctx): Promise<WriteContext['parent']> {
  if (!kind.parent) return undefined;
  const id = ctx.params[kind.parent.idParam]!;
  const row = isId(kind.parent.letter, id) ? await findEntity(trx, { tenantId: ctx.principal.tenantId, type: kind.parent.type, id }) : undefined;
  if (!row || row.deleted) throw new EntityNotFound(kind.parent.label);
  return { id: row.id, doc: row.doc, readable_by: row.readable_by, modifiable_by: row.modifiable_by };
}

async function writeContext(trx: Knex.Transaction, tenant: TenantSettings, kind: EntityKind, ctx: Ctx): Promise<WriteContext> {
  return { principal: ctx.principal, now: new Date().toISOString(), tenant, parent: await loadParent(trx, kind, ctx) };
}

async function create(kind: EntityKind, ctx: Ctx, run: TenantRunner) {
  mustBeMachine(ctx.principal, `create a ${kind.label}`);
  const body = ctx.body as Doc;
  kind.beforeCreate?.(body, ctx.query);
  kind.clientWrites?.create?.(body);
  const row = await run(async (trx, tenant) => {
    const wctx = await writeContext(trx, tenant, kind, ctx);
    return writeNew(trx, kind, tenant, wctx, kind.create(body, wctx), { byClient: true });
  });
  const location = kind.path.replace('{parent}', row.parent_id ?? '') + row.id;
  return { status: 201, headers: { Location: location }, body: presentEntity(row) };
}

async function read(db: Knex, kind: EntityKind, ctx: Ctx) {
  const fields = embedFields(kind, ctx.query.embed);
  return readInTenant(db, ctx.principal.tenantId, async (trx) => {
    const row = await load(trx, kind, ctx, false);
    if (!canRead(ctx.principal, row)) throw new NotPermitted(`You may not read this ${kind.label}.`);
    const wanted = ctx.query.version as number | undefined;
    const old = wanted === undefined || wanted === row.version ? undefined : await findVersion(trx, row.tenant_id, row.id, wanted);
    if (wanted !== undefined && wanted !== row.version && !old) throw new EntityNotFound(`version ${wanted} of this ${kind.label}`);
    const entity = presentEntity(row, old);
    entity._embedded = await embedded(trx, ctx.principal, [old ? { ...row, doc: old.doc } : row], fields);
    return { status: 200, body: entity };
  });
}

async function change(db: Knex, kind: EntityKind, ctx: Ctx, what: 'update' | 'delete') {
  const row = await inTenant(db, ctx.principal.tenantId, async (trx, tenant) => {
    const current = await load(trx, kind, ctx, true);
    mustModify(ctx.principal, current, kind.label);
    if (what === 'delete') mustBeMachine(ctx.principal, `delete a ${kind.label}`);
    checkIfMatch(ctx.headers['if-match'], current.version);
    if (what === 'delete' && current.deleted) return current;
    if (current.deleted) throw new StateConflict(`This ${kind.label} is deleted.`);
    if (what === 'delete') kind.clientWrites?.delete?.(current.doc);
    const wctx = await writeContext(trx, tenant, kind, ctx);
    if (what === 'update') {
      // Checked on the patch as sent (so a customer hears 403 before any other rule of the kind,
      // naming the field it sent) and on the result of the kind's rules (values they replace whole).
      mustBeCustomersChange(ctx.principal, kind.type, current.doc, mergePatch(current.doc, ctx.body as Doc));
    }
    const doc = what === 'update' ? kind.update(current.doc, ctx.body as Doc, wctx) : current.doc;
    if (what === 'update') mustBeCustomersChange(ctx.principal, kind.type, current.doc, doc);
    if (what === 'update') kind.clientWrites?.update?.(current.doc, doc);
    if (what === 'update' && jsonEqual(doc, current.doc)) return current;
    return writeNext(trx, kind, tenant, wctx, current, doc, { deleted: what === 'delete', byClient: true });
  });
  return { status: 200, body: presentEntity(row) };
}

async function versions(db: Knex, kind: EntityKind, ctx: Ctx) {
  const limit = (ctx.query.limit as number | undefined) ?? 20;
  const offset = (ctx.query.offset as number | undefined) ?? 0;
  return readInTenant(db, ctx.principal.tenantId, async (trx) => {
    const row = await load(trx, kind, ctx, false);
    if (!canRead(ctx.principal, row)) throw new NotPermitted(`You may not read this ${kind.label}.`);
    const first = offset + 1;
    const last = Math.min(offset + limit, row.version);
    const rows = first <= last ? await listVersions(trx, row.tenant_id, row.id, Math.max(1, first - 1), last) : [];
    const results = rows
      .filter((v) => v.version >= first)
      .map((v) =>
        presentVersion(
          v,
          versionPatch(
            rows.find((p) => p.version === v.version - 1),
            v,
          ),
        ),
      );
    const next = last < row.version ? `${ctx.req.path}?limit=${limit}&offset=${offset + limit}` : null;
    return { status: 200, body: { next, count: row.version, offset, results, _embedded: {} } };
  });
}
