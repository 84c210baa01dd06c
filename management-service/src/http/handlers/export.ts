import type { Knex } from 'knex';
import { isId, type OperationHandler } from '@platform/shared';
import { EntityNotFound } from '../../domain/errors.ts';
import { exportFileName, mustExport } from '../../domain/personal-data.ts';
import type { Principal } from '../../domain/principal.ts';
import { findEntity } from '../../store/entities.ts';
import { openTenantSnapshot } from '../../store/tenant-scope.ts';
import { exportDocument } from '../export-document.ts';

/**
 * GET /users/{user_id}/export/ (docs/adr/0060-personal-data-export.md): who may ask and whether the
 * user exists are settled before the first byte, so that they are answered as problems; the
 * document is then streamed from one snapshot, which ends when the stream does.
 */
export function exportHandlers(db: Knex): Record<string, OperationHandler<Principal>> {
  return {
    exportUser: async (ctx) => {
      const userId = ctx.params.user_id!;
      const { tenantId } = ctx.principal;
      if (!isId('U', userId)) throw new EntityNotFound('user');
      const trx = await openTenantSnapshot(db, tenantId);
      const at = new Date();
      let user;
      try {
        // Deleted users export too: deleted is a flag, their data is still held.
        user = await findEntity(trx, { tenantId, type: 'users', id: userId });
        if (!user) throw new EntityNotFound('user');
        mustExport(ctx.principal, user.id);
      } catch (error) {
        await trx.rollback();
        throw error;
      }
      return {
        status: 200,
        headers: { 'Content-Disposition': `attachment; filename="${exportFileName(userId)}"` },
        stream: ended(trx, exportDocument({ trx, tenantId, user, at })),
      };
    },
  };
}

/**
 * The pieces of `pieces`, the snapshot ended once: when they run out or fail, or when the reader
 * stops early (`return`), even before the first piece, where a generator's `finally` would not run.
 */
function ended(trx: Knex.Transaction, pieces: AsyncGenerator<string>): AsyncIterable<string> {
  let over = false;
  const finish = async () => {
    if (over) return;
    over = true;
    await trx.rollback();
  };
  return {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        try {
          const piece = await pieces.next();
          if (piece.done) await finish();
          return piece;
        } catch (error) {
          await finish();
          throw error;
        }
      },
      return: async () => {
        try {
          await pieces.return(undefined);
        } finally {
          await finish();
        }
        return { done: true, value: undefined };
      },
    }),
  };
}
