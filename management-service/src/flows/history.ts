import type { Knex } from 'knex';
import { subjects, type NatsConnection } from '@platform/shared';
import type { components } from '@platform/api-types/events';
import { DependencyUnavailable, InvalidField } from '../domain/errors.ts';
import { historyPeriod, historyRequest, policyModel, refusalLoc, type HistoryFrequency, type HistoryRequest } from '../domain/history-request.ts';
import type { Doc } from '../domain/merge.ts';
import type { EntityRow } from '../store/entities.ts';
import { findEntity } from '../store/entities.ts';
import { portfolioVersions, settledCashMoves } from '../store/history.ts';

type HistoryReply = components['schemas']['HistoryReply'];
export type PortfolioHistory = components['schemas']['HistoryAnswer'];

export const ARROW_STREAM = 'application/vnd.apache.arrow.stream';

/** The data service's answer: the history as JSON, or the Arrow IPC bytes it sent for it. */
export type HistoryAnswer = { history: PortfolioHistory } | { arrow: Uint8Array };
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
    if (reply.headers?.get('Content-Type') === ARROW_STREAM) return { arrow: reply.data };
    const body = reply.json<HistoryReply>();
    if ('history' in body) return { history: body.history };
    const { code, loc, detail } = body.error;
    if (code === 'invalid_value' || code === 'unknown_value' || code === 'too_many_points') throw new InvalidField(refusalLoc(loc), detail);
    throw new DependencyUnavailable('The data service could not compute the history; retry in a few seconds.');
  };
}
