import type { Knex } from 'knex';
import type { OperationHandler } from '@platform/shared';
import type { Principal } from '../../domain/principal.ts';
import { InvalidParameter } from '../../domain/errors.ts';
import { mustBeMachine } from '../../domain/permissions.ts';
import { eventsAfter, removedAfter, type Cursor } from '../../store/outbox.ts';
import { inTenant } from '../../store/tenant-scope.ts';

// The form the contract allows: numbers without leading zeros (Postgres would read 080 as octal), within xid8 and bigint.
const CURSOR = /^(0|[1-9]\d{0,18})-(0|[1-9]\d{0,17})$/;
const START = '0-0';

function parseCursor(text: unknown): Cursor | undefined {
  if (text === undefined || text === '') return undefined;
  const m = String(text).match(CURSOR);
  if (!m) throw new InvalidParameter(['query', 'after'], 'is not a cursor of this service: pass the next_cursor of the previous answer.');
  return { xid: m[1]!, seq: m[2]! };
}

/** GET /events/: the tenant's outbound events in commit order, polled with a cursor (docs/adr/0002-event-feed-cursor.md). */
export function eventHandlers(db: Knex): Record<string, OperationHandler<Principal>> {
  return {
    listEvents: async ({ principal, query }) => {
      // The feed is the integration's: it carries every customer's events.
      mustBeMachine(principal, 'read the event feed');
      const after = parseCursor(query.after);
      const limit = (query.limit as number | undefined) ?? 100;
      const only = { subject: query.subject as string | undefined, entityId: query.entity_id as string | undefined };
      const rows = await inTenant(db, principal.tenantId, async (trx) => {
        // Events after an old cursor may have been removed (docs/adr/0061-retention.md): say so rather than skip them.
        if (after && (await removedAfter(trx, principal.tenantId, after)))
          throw new InvalidParameter(
            ['query', 'after'],
            'points before events this service no longer keeps (it keeps them for a limited number of days): omit it to read from the oldest kept event.',
          );
        return eventsAfter(trx, principal.tenantId, after, limit, only);
      });
      const last = rows[rows.length - 1];
      const next = last ? `${last.xid}-${last.seq}` : after ? `${after.xid}-${after.seq}` : START;
      return { status: 200, body: { results: rows.map((r) => r.envelope), next_cursor: next } };
    },
  };
}
