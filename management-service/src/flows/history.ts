import type { Knex } from 'knex';
import { subjects, type NatsConnection } from '@platform/shared';
import type { components } from '@platform/api-types/events';
import { DependencyUnavailable, InvalidField } from '../domain/errors.ts';
import { historyPeriod, historyRequest, policyModel, refusalLoc, type HistoryFrequency, type HistoryRequest } from '../domain/history-request.ts';
import type { Doc } from '../domain/merge.ts';
import type { EntityRow } from '../store/entities.ts';
import { findEntity } from '../store/entities.ts';
import { portfolioVersions, settledCashMoves } from '../store/history.ts';

type HistoryRefusal = components['schemas']['HistoryRefusal'];

export const ARROW_STREAM = 'application/vnd.apache.arrow.stream';
export const JSON_TYPE = 'application/json';
/** The Content-Type of the data service's refusal (contracts/events.asyncapi.yaml, HistoryReply). */
const HISTORY_REFUSAL = 'application/vnd.history-refusal+json';

/**
 * The data service's computed history as it sent it: the JSON text of a HistoryAnswer or the Arrow
 * IPC bytes, handed on to the client unparsed (half a megabyte of JSON for ten daily years).
 */
export type HistoryAnswer = { contentType: typeof JSON_TYPE | typeof ARROW_STREAM; bytes: Uint8Array };
export type HistoryAsker = (request: HistoryRequest) => Promise<HistoryAnswer>;

export type HistoryQuery = { from?: string; to?: string; frequency: HistoryFrequency; model: boolean; format: HistoryRequest['format'] };

/**
 * What the data service needs of a readable portfolio, read in the caller's tenant transaction: its
 * versions, its settled cash moves and, when asked for, its policy's model
 * (docs/adr/0058-portfolio-history.md).
 */
export async function readHistoryRequest(trx: Knex.Transaction, portfolio: EntityRow, query: HistoryQuery, now: Date): Promise<HistoryRequest> {
  const versions = await portfolioVersions(trx, portfolio.tenant_id, portfolio.id);
  const period = historyPeriod(query, versions[0]?.version_at ?? now, now);
  let model: HistoryRequest['model'];
  if (query.model) {
    const policyId = ((portfolio.doc.config as Doc | undefined)?.manager_settings as Doc | undefined)?.policy_id;
    const policy = typeof policyId === 'string' ? await findEntity(trx, { tenantId: portfolio.tenant_id, type: 'policies', id: policyId }) : undefined;
    model = policyModel(policy?.doc);
  }
  return historyRequest({
    tenantId: portfolio.tenant_id,
    portfolioId: portfolio.id,
    baseCurrency: String(portfolio.doc.base_currency),
    period,
    frequency: query.frequency,
    format: query.format,
    versions,
    cash: await settledCashMoves(trx, portfolio.tenant_id, portfolio.id),
    model,
  });
}

/**
 * Asks the data service over NATS (request/reply on the tenant's history subject) and waits at most
 * `timeoutMs`. No answer, nobody listening, or a failure of the data service is 503 (try again); a
 * refusal of what was asked is 422 at the parameter or portfolio it names.
 */
export function natsHistoryAsker(nats: NatsConnection, timeoutMs: number): HistoryAsker {
  return async (request) => {
    const reply = await nats.request(subjects.historyRequests(request.tenant_id), JSON.stringify(request), { timeout: timeoutMs }).catch(() => {
      throw new DependencyUnavailable('The data service did not answer in time; retry in a few seconds.');
    });
    const contentType = reply.headers?.get('Content-Type');
    if (contentType === JSON_TYPE || contentType === ARROW_STREAM) return { contentType, bytes: reply.data };
    if (contentType === HISTORY_REFUSAL) {
      const { code, loc, detail } = reply.json<HistoryRefusal>();
      if (code === 'invalid_value' || code === 'unknown_value' || code === 'too_many_points') throw new InvalidField(refusalLoc(loc), detail);
    }
    throw new DependencyUnavailable('The data service could not compute the history; retry in a few seconds.');
  };
}
