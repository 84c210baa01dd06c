import type { Knex } from 'knex';
import type { HandlerContext, OperationHandler } from '@platform/shared';
import { NotAcceptable } from '../../domain/errors.ts';
import type { Principal } from '../../domain/principal.ts';
import { ARROW_STREAM, JSON_TYPE, readHistoryRequest, type HistoryAsker, type HistoryQuery } from '../../flows/history.ts';
import { readInTenant } from '../../store/tenant-scope.ts';
import { readablePortfolio } from './optimizations.ts';

/** JSON unless the client accepts only Apache Arrow (q-values honoured); neither is 406. */
function negotiate(ctx: HandlerContext<Principal>): HistoryQuery['format'] {
  const chosen = ctx.req.accepts([JSON_TYPE, ARROW_STREAM]);
  if (!chosen) throw new NotAcceptable(`Offered: ${JSON_TYPE}, ${ARROW_STREAM}.`);
  return chosen === ARROW_STREAM ? 'arrow' : 'json';
}

/** GET /portfolios/{portfolio_id}/history/ (docs/adr/0058-portfolio-history.md): read here, computed by the data service. */
export function historyHandlers(db: Knex, ask: HistoryAsker): Record<string, OperationHandler<Principal>> {
  return {
    getPortfolioHistory: async (ctx) => {
      const format = negotiate(ctx);
      const q = ctx.query as { from?: string; to?: string; frequency?: HistoryQuery['frequency']; model?: boolean };
      const query: HistoryQuery = { from: q.from, to: q.to, frequency: q.frequency ?? 'D', model: q.model === true, format };
      const request = await readInTenant(db, ctx.principal.tenantId, async (trx) =>
        readHistoryRequest(trx, await readablePortfolio(trx, ctx), query, new Date()),
      );
      const answer = await ask(request);
      return { status: 200, body: answer.bytes, contentType: answer.contentType };
    },
  };
}
