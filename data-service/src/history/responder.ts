// The data service's side of a history request (docs/adr/0058-portfolio-history.md, "Wiring").
import { messageCheck, natsHeaders, subjects, type Logger, type NatsConnection, type NatsMsg } from '@platform/shared';
import type { components } from '@platform/api-types/events';
import { DataError, InvalidValue, UnknownValue } from '../domain/errors.ts';
import type { FxSeriesReader } from '../fx/store.ts';
import { parseDay } from '../simulation/dates.ts';
import type { DuckStore } from '../store/duckdb.ts';
import { historyToArrow } from './arrow.ts';
import { portfolioHistory } from './calculate.ts';
import type { HistoryRequest } from './input.ts';
import { samplePositions } from './sampling.ts';
import { namedInRequest, readFxTable, readPriceTable, weekdays } from './tables.ts';

type Request = components['schemas']['HistoryRequest'];
type Refusal = components['schemas']['HistoryRefusal'];

/** Every replica joins this queue group: each request is answered by one of them. */
export const HISTORY_QUEUE = 'history';
/**
 * The most points one reply carries: about 190 bytes each as JSON with a model, so 4,000 stay well
 * under NATS's default maximum payload of 1 MB (contracts/events.asyncapi.yaml).
 */
export const MAX_HISTORY_POINTS = 4000;
export const ARROW_STREAM = 'application/vnd.apache.arrow.stream';
/** A refusal's Content-Type (contracts/events.asyncapi.yaml, HistoryReply). */
export const HISTORY_REFUSAL = 'application/vnd.history-refusal+json';

/** `fxMaxAgeDays`: the oldest rate that converts, FX_MAX_AGE_DAYS (docs/adr/0057-fx-rates.md). */
export type HistoryResponderDeps = { nats: NatsConnection; duck: DuckStore; fx: FxSeriesReader; fxMaxAgeDays: number; logger: Logger };
export type HistoryReplyBytes = { data: Uint8Array | string; contentType: string };

class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.detail);
  }
}

const refusal = (value: Refusal): HistoryReplyBytes => ({ data: JSON.stringify(value), contentType: HISTORY_REFUSAL });

/** The points the request would show, counted on the weekday calendar before anything is read. */
function shownPoints(request: Request): number {
  const from = parseDay(request.from);
  const to = parseDay(request.to);
  if (from === undefined || to === undefined || to < from) return 0; // the calculator says what is wrong
  return samplePositions(weekdays(from, to), request.frequency).length;
}

/**
 * The replies to requests of `tenantId` (the subject's): the history as JSON or Arrow, or a
 * refusal as JSON. Throws only what is not the request's fault.
 */
export function historyAnswerer(deps: Omit<HistoryResponderDeps, 'nats' | 'logger'>): (tenantId: string, body: unknown) => Promise<HistoryReplyBytes> {
  const check = messageCheck('HistoryRequest');
  return (tenantId, body) => historyReply(deps, check(body), tenantId);
}

async function historyReply(
  deps: Omit<HistoryResponderDeps, 'nats' | 'logger'>,
  checked: ReturnType<ReturnType<typeof messageCheck<'HistoryRequest'>>>,
  tenantId: string,
): Promise<HistoryReplyBytes> {
  if (!checked.ok) return refusal({ code: 'invalid_request', loc: [], detail: checked.errors });
  const request = checked.message;
  if (request.tenant_id !== tenantId) return refusal({ code: 'invalid_request', loc: ['tenant_id'], detail: "is not the subject's tenant" });
  try {
    const points = shownPoints(request);
    if (points > MAX_HISTORY_POINTS) {
      throw new Refused({
        code: 'too_many_points',
        loc: ['frequency'],
        detail: `${points} points from ${request.from} to ${request.to} at ${request.frequency}; at most ${MAX_HISTORY_POINTS}: ask for W or M, or a shorter period`,
      });
    }
    const calculation = request as HistoryRequest;
    const named = namedInRequest(calculation);
    const prices = await readPriceTable(deps.duck, named.isins, request);
    const fx = await readFxTable(deps.fx, prices.days, [...named.currencies, ...prices.currencies], request.base_currency);
    const answer = portfolioHistory(calculation, prices, fx.table, { maxAgeDays: deps.fxMaxAgeDays, legs: fx.legs });
    if (request.format === 'arrow') return { data: historyToArrow(answer), contentType: ARROW_STREAM };
    return { data: JSON.stringify(answer), contentType: 'application/json' };
  } catch (error) {
    if (error instanceof Refused) return refusal(error.refusal);
    if (error instanceof InvalidValue) return refusal({ code: 'invalid_value', loc: error.loc, detail: error.msg });
    if (error instanceof UnknownValue) return refusal({ code: 'unknown_value', loc: error.loc, detail: error.msg });
    if (error instanceof DataError) return refusal({ code: 'invalid_value', loc: [], detail: error.message });
    throw error;
  }
}

/**
 * Answers `services.history.<tenant>` in the queue group of every replica until stop(), which
 * drains the subscription: requests already taken are answered, no new one is.
 */
export function startHistoryResponder(deps: HistoryResponderDeps): { stop: () => Promise<void> } {
  const answerFor = historyAnswerer(deps);
  const prefix = subjects.historyRequests('');
  const answer = async (msg: NatsMsg) => {
    if (!msg.reply) return; // a publish without a reply subject asks nothing
    const tenantId = msg.subject.slice(prefix.length);
    let reply: HistoryReplyBytes;
    try {
      let body: unknown;
      try {
        body = msg.json();
      } catch {
        body = undefined;
      }
      reply = await answerFor(tenantId, body);
    } catch (error) {
      deps.logger.error('history not computed', { tenant: tenantId, error: (error as Error).message });
      reply = refusal({ code: 'internal', loc: [], detail: 'The history could not be computed.' });
    }
    const headers = natsHeaders();
    headers.set('Content-Type', reply.contentType);
    msg.respond(reply.data, { headers });
  };
  const subscription = deps.nats.subscribe(subjects.everyHistoryRequest, {
    queue: HISTORY_QUEUE,
    callback: (error, msg) => {
      if (error) deps.logger.warn('history requests not received', { error: error.message });
      else void answer(msg);
    },
  });
  return { stop: () => subscription.drain() };
}
