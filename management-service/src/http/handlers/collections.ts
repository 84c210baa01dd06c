import type { Knex } from 'knex';
import { isId, type HandlerContext, type OperationHandler } from '@platform/shared';
import type { Principal } from '../../domain/principal.ts';
import { EntityNotFound, NotPermitted } from '../../domain/errors.ts';
import type { EntityKind } from '../../domain/entities/kind.ts';
import { canRead } from '../../domain/permissions.ts';
import type { Path, SortKey } from '../../query/ast.ts';
import { compileQuery } from '../../query/compile.ts';
import { fieldType } from '../../query/fields.ts';
import { parseQuery } from '../../query/parser.ts';
import { countAndPage } from '../../store/collections.ts';
import { findEntity } from '../../store/entities.ts';
import { readInTenant } from '../../store/tenant-scope.ts';
import { embedded, embedFields } from '../embed.ts';
import { presentEntity } from '../present.ts';
import { pick } from '../select.ts';

type Ctx = HandlerContext<Principal>;

/** What the generic list serves: an entity kind of the catalogue, or a collection of the service's own entities (optimizations). */
export type Collection = Pick<EntityKind, 'type' | 'parent' | 'embeddable'> & {
  /** Without `orderby` in the query, newest first (creation time, then id) instead of by id. */
  newestFirst?: boolean;
  /** Whoever may read the parent reads all its children, not only those whose `readable_by` names them. */
  readableWithParent?: boolean;
};

const NEWEST_FIRST: SortKey[] = [
  { path: ['creation_datetime'], direction: 'desc', at: 0 },
  { path: ['id'], direction: 'desc', at: 0 },
];

/** GET on every collection root: paging, embed, and the query language of docs/adr/0011-query-language.md. */
export function collectionHandlers(db: Knex, kinds: EntityKind[], schemas: Record<string, unknown>): Record<string, OperationHandler<Principal>> {
  return Object.fromEntries(
    kinds.map((kind) => {
      const schema = schemas[kind.schema] as Parameters<typeof fieldType>[0];
      return [kind.operations.list, (ctx: Ctx) => listCollection(db, kind, (path) => fieldType(schema, path), ctx)];
    }),
  );
}

/** A page of a collection: paging, embed, and the query language (docs/adr/0011-query-language.md). */
export async function listCollection(db: Knex, kind: Collection, typeOf: (path: Path) => ReturnType<typeof fieldType>, ctx: Ctx) {
  const limit = (ctx.query.limit as number | undefined) ?? 20;
  const offset = (ctx.query.offset as number | undefined) ?? 0;
  const fields = embedFields(kind, ctx.query.embed);
  const parsed = parseQuery(String(ctx.query.query ?? ''));
  const compiled = compileQuery(kind.newestFirst && parsed.orderBy.length === 0 ? { ...parsed, orderBy: NEWEST_FIRST } : parsed, typeOf);
  const { principal } = ctx;

  // Each statement is its own read-committed snapshot either way; a read session saves the BEGIN and COMMIT round trips (docs/adr/0031-http-hot-path.md).
  return readInTenant(db, principal.tenantId, async (trx) => {
    let parentId: string | undefined;
    if (kind.parent) {
      parentId = ctx.params[kind.parent.idParam]!;
      const parent = isId(kind.parent.letter, parentId)
        ? await findEntity(trx, { tenantId: principal.tenantId, type: kind.parent.type, id: parentId })
        : undefined;
      if (!parent) throw new EntityNotFound(kind.parent.label);
      // Another customer's children are refused as the parent itself is (docs/adr/0001-customer-rights.md), not answered as an empty page.
      if (!canRead(principal, parent)) throw new NotPermitted(`You may not read this ${kind.parent.label}.`);
    }
    const { total, rows: page } = await countAndPage(
      trx,
      {
        tenantId: principal.tenantId,
        type: kind.type,
        parentId,
        // Deleted entities are left out unless the query names `deleted`.
        includeDeleted: compiled.namesDeleted,
        readableBy: principal.kind === 'user' && !kind.readableWithParent ? principal.subject : undefined,
        where: compiled.where,
      },
      compiled.orderBy,
      { limit, offset },
    );
    const results = page.map((row) => presentEntity(row)).map((entity) => (compiled.select ? pick(entity, compiled.select) : entity));
    const params = new URLSearchParams(Object.entries(ctx.query).map(([k, v]): [string, string] => [k, String(v)]));
    params.set('limit', String(limit));
    params.set('offset', String(offset + limit));
    return {
      status: 200,
      body: {
        next: offset + limit < total ? `${ctx.req.path}?${params.toString()}` : null,
        count: total,
        offset,
        results,
        _embedded: await embedded(trx, principal, page, fields),
      },
    };
  });
}
