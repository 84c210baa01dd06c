import { mustBeMachine } from '../../domain/permissions.ts';
import { eraseUser } from '../../flows/erasure.ts';
import type { PostHandler } from '../idempotency.ts';
import { presentEntity } from '../present.ts';

/** POST /users/{user_id}/erasure/ (docs/adr/0059-personal-data-erasure.md): the tenant's machine clients only. */
export function erasureHandlers(): Record<string, PostHandler> {
  return {
    eraseUser: async (ctx, run) => {
      mustBeMachine(ctx.principal, "erase a user's personal data");
      const userId = ctx.params.user_id!;
      const user = await run((trx, tenant) => eraseUser(trx, tenant, ctx.principal, userId, new Date().toISOString()));
      return { status: 200, body: presentEntity(user) };
    },
  };
}
