import type { components } from '@platform/api-types/events';
import { InvalidField } from './errors.ts';
import type { Doc } from './merge.ts';

export type HistoryRequest = components['schemas']['HistoryRequest'];
export type HistoryRefusal = components['schemas']['HistoryRefusal'];
export type HistoryFrequency = HistoryRequest['frequency'];

/** A portfolio's version as stored: when it was written and its holdings. */
export type StoredVersion = { version_at: Date; holdings: unknown };
/** A settled cash transaction: signed quantity (deposit positive), currency and time. */
export type StoredCashMove = { quantity: string; currency: string; datetime: string };

const day = (iso: string) => iso.slice(0, 10);

/**
 * The most versions and cash moves one request carries: the `maxItems` of HistoryRequest's
 * `versions` and `flows` (contracts/events.asyncapi.yaml). More is refused here, at the period,
 * rather than by the data service's check of the contract, which the client would see as a failure.
 */
export const HISTORY_REQUEST_LIMITS = { versions: 20_000, flows: 100_000 } as const;
export type HistoryRequestLimits = { versions: number; flows: number };

/** A holdings document as the request carries it: units or cash by key, numbers only. */
function holdingsOf(value: unknown): Record<string, number> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter((e): e is [string, number] => typeof e[1] === 'number'));
}

/**
 * The period asked for: `from` defaults to the day the portfolio was created, `to` to today (UTC);
 * `to` before `from` is refused at `to`.
 */
export function historyPeriod(query: { from?: string; to?: string }, createdAt: Date, now: Date): { from: string; to: string } {
  const from = query.from ?? day(createdAt.toISOString());
  const to = query.to ?? day(now.toISOString());
  if (to < from) throw new InvalidField(['query', 'to'], `must not be before from (${from})`);
  return { from, to };
}

/**
 * The model of the portfolio's policy: its model weights and the rest in cash. A portfolio without a
 * policy, or a policy without a model, has none to compare with.
 */
export function policyModel(policy: Doc | undefined): NonNullable<HistoryRequest['model']> {
  const weights = ((policy?.config as Doc | undefined)?.model_portfolio ?? {}) as Record<string, number>;
  const total = Object.values(weights).reduce((a, b) => a + b, 0);
  if (!policy || Object.keys(weights).length === 0) throw new InvalidField(['query', 'model'], "the portfolio's policy has no model portfolio to compare with");
  // The policy's weights add up to 1 at most (the rest is cash); a float sum a hair above 1 is 1.
  return { weights, cash_weight: Math.max(0, 1 - total) };
}

/**
 * The request for the data service (contracts/events.asyncapi.yaml HistoryRequest): only the versions
 * that matter to the period (the last one written on or before its first day, and those written
 * within it), and the settled cash moves within it; one before it is in the first day's value
 * already (docs/adr/0058-portfolio-history.md). More of either than `limits` is refused at `from`.
 */
export function historyRequest(input: {
  tenantId: string;
  portfolioId: string;
  baseCurrency: string;
  period: { from: string; to: string };
  frequency: HistoryFrequency;
  format: HistoryRequest['format'];
  versions: StoredVersion[];
  cash: StoredCashMove[];
  model?: HistoryRequest['model'];
  limits?: HistoryRequestLimits;
}): HistoryRequest {
  const { from, to } = input.period;
  const dated = input.versions.map((v) => ({ from: v.version_at.toISOString(), holdings: holdingsOf(v.holdings) }));
  let start = 0;
  dated.forEach((v, i) => {
    if (day(v.from) <= from) start = i;
  });
  const versions = dated.slice(start).filter((v) => day(v.from) <= to);
  // Times as UTC with milliseconds, as the calculator reads them (a client may have written an offset).
  const flows = input.cash
    .map((c) => ({ at: new Date(c.datetime).toISOString(), amount: c.quantity, currency: c.currency }))
    .filter((c) => day(c.at) > from && day(c.at) <= to)
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const limits = input.limits ?? HISTORY_REQUEST_LIMITS;
  const over = (count: number, max: number, what: string) => {
    if (count > max)
      throw new InvalidField(
        ['query', 'from'],
        `${count} ${what} of the portfolio from ${from} to ${to}; at most ${max} in one history: ask for a shorter period`,
      );
  };
  over(versions.length, limits.versions, 'versions');
  over(flows.length, limits.flows, 'cash moves');
  return {
    tenant_id: input.tenantId,
    portfolio_id: input.portfolioId,
    base_currency: input.baseCurrency,
    from,
    to,
    frequency: input.frequency,
    format: input.format,
    versions,
    flows,
    ...(input.model ? { model: input.model } : {}),
  };
}

/**
 * Where a refusal of the data service points in the HTTP request: the period and frequency are
 * query parameters, the model is `model`; what is wrong in the portfolio's own versions or cash
 * (an instrument without prices, a currency without rates) is the portfolio of the path.
 */
export function refusalLoc(loc: HistoryRefusal['loc']): (string | number)[] {
  const [first, ...rest] = loc;
  if (first === 'from' || first === 'to' || first === 'frequency') return ['query', first];
  if (first === 'model') return ['query', 'model', ...rest];
  return ['path', 'portfolio_id', ...loc];
}
