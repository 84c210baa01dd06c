import type { Knex } from 'knex';
import { isId, type HandlerContext, type OperationHandler } from '@platform/shared';
import { EntityNotFound, NotPermitted } from '../../domain/errors.ts';
import type { OwnerChoice } from '../../domain/optimization-gate.ts';
import { canRead, mustBeMachine } from '../../domain/permissions.ts';
import type { Principal } from '../../domain/principal.ts';
import { chooseOnOptimization } from '../../flows/optimization/choice.ts';
import { requestByOperator } from '../../flows/optimization/request.ts';
import { fieldType } from '../../query/fields.ts';
import { findEntity, type EntityRow } from '../../store/entities.ts';
import { findOptimization, latestOptimization } from '../../store/optimizations.ts';
import { inTenant, readInTenant } from '../../store/tenant-scope.ts';
import type { PostHandler } from '../idempotency.ts';
import { presentEntity } from '../present.ts';
import { listCollection, type Collection } from './collections.ts';

type Ctx = HandlerContext<Principal>;

/** Optimizations as a collection: children of their portfolio, newest first, readable by whoever may read the portfolio. */
const OPTIMIZATIONS: Collection = {
  type: 'optimizations',
  parent: { type: 'portfolios', letter: 'P', label: 'portfolio', idParam: 'portfolio_id' },
  embeddable: ['portfolio_id'],
  newestFirst: true,
  readableWithParent: true,
};

/** The portfolio of the path: 404 for a wrong letter, another tenant's id or an unknown one; 403 when the caller may not read it. */
export async function readablePortfolio(trx: Knex.Transaction, ctx: Ctx): Promise<EntityRow> {
  const id = ctx.params.portfolio_id!;
  const portfolio = isId('P', id) ? await findEntity(trx, { tenantId: ctx.principal.tenantId, type: 'portfolios', id }) : undefined;
  if (!portfolio) throw new EntityNotFound('portfolio');
  if (!canRead(ctx.principal, portfolio)) throw new NotPermitted('You may not read this portfolio.');
  return portfolio;
}

/**
 * The five operations of optimizations (docs/adr/0021-optimizations.md): the collection, the latest, one by id, the
 * operator's request (a POST, so under its Idempotency-Key) and the owner's choice.
 */
export function optimizationHandlers(
  db: Knex,
  schemas: Record<string, unknown>,
): { posts: Record<string, PostHandler>; others: Record<string, OperationHandler<Principal>> } {
  const schema = schemas.Optimization as Parameters<typeof fieldType>[0];
  return {
    posts: {
      requestOptimization: async (ctx, run) => {
        mustBeMachine(ctx.principal, 'request optimizations');
        const portfolioId = ctx.params.portfolio_id!;
        if (!isId('P', portfolioId)) throw new EntityNotFound('portfolio');
        const externalId = (ctx.body as { external_id?: string | null } | undefined)?.external_id ?? null;
        const row = await run((trx) => requestByOperator(trx, ctx.principal, portfolioId, externalId, new Date().toISOString()));
        return { status: 202, headers: { Location: `/optimizations/${row.id}` }, body: presentEntity(row) };
      },
    },
    others: {
      listOptimizations: (ctx) => listCollection(db, OPTIMIZATIONS, (path) => fieldType(schema, path), ctx),
      getLatestOptimization: (ctx) =>
        readInTenant(db, ctx.principal.tenantId, async (trx) => {
          const portfolio = await readablePortfolio(trx, ctx);
          const row = await latestOptimization(trx, portfolio.tenant_id, portfolio.id);
          if (!row) throw new EntityNotFound('optimization of this portfolio');
          return { status: row.doc.status === 'PENDING' ? 202 : 200, body: presentEntity(row) };
        }),
      getOptimization: (ctx) =>
        readInTenant(db, ctx.principal.tenantId, async (trx) => {
          const id = ctx.params.optimization_id!;
          const row = isId('O', id) ? await findOptimization(trx, ctx.principal.tenantId, id) : undefined;
          if (!row) throw new EntityNotFound('optimization');
          const portfolio = await findEntity(trx, { tenantId: row.tenant_id, type: 'portfolios', id: row.parent_id! });
          if (!portfolio || !canRead(ctx.principal, portfolio)) throw new NotPermitted('You may not read this optimization.');
          return { status: 200, body: presentEntity(row) };
        }),
      updateOptimizationOwnerChoice: async (ctx) => {
        const id = ctx.params.optimization_id!;
        if (!isId('O', id)) throw new EntityNotFound('optimization');
        const choice = (ctx.body as { owner_choice: OwnerChoice }).owner_choice;
        const row = await inTenant(db, ctx.principal.tenantId, (trx, tenant) =>
          chooseOnOptimization(trx, tenant, ctx.principal, { id, choice, ifMatch: ctx.headers['if-match'] }, new Date().toISOString()),
        );
        return { status: 200, body: presentEntity(row) };
      },
    },
  };
}
