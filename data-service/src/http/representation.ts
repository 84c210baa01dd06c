// The representations the data interface offers where it answers JSON or Apache Arrow.
import { ProblemError, type HandlerContext } from '@platform/shared';
import type { DataPrincipal } from '../auth/api-keys.ts';

export const JSON_TYPE = 'application/json';
const ARROW_TYPES = ['application/vnd.apache.arrow.stream', 'application/octet-stream'];
const OFFERED = [JSON_TYPE, ...ARROW_TYPES];

/**
 * The representation `accept` asks for (q-values honoured; no header or any type is JSON), and the
 * Content-Type to answer with: the Arrow type the client named. Nothing offered is a 406.
 */
export function negotiate(ctx: HandlerContext<DataPrincipal>): string {
  const chosen = ctx.req.accepts(OFFERED);
  if (!chosen) throw new ProblemError(406, 'not_acceptable', `Offered: ${OFFERED.join(', ')}.`);
  return chosen;
}
