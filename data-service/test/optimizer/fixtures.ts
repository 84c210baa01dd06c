// Builders of optimizer requests and store facts for the engine's tests (no I/O).
import type { InstrumentFacts, OptimizerRequest } from '../../src/optimizer/engine.ts';
import type { RateFact } from '../../src/optimizer/rates.ts';

export const EQ1 = 'IE00B4L5Y983';
export const EQ2 = 'IE00B5BMR087';
export const BD1 = 'IE00B3F81R35';
export const US1 = 'US0378331005';

/** A request with no holdings, no policy constraints and no costs; `overrides` replace whole fields. */
export function optimizerRequest(overrides: Partial<OptimizerRequest> = {}): OptimizerRequest {
  return {
    request_id: '01JP9ZX69RV2RRB2RCVFKT2SRR',
    tenant_id: 'acme',
    portfolio_id: 'P01JP9ZMQCN0XG3YNRRKJ6T0FZ3',
    optimization_id: 'O01JP9ZMSB5HT8EWXBBS2C33S7Q',
    reason: 'OPERATOR',
    requested_at: '2025-03-14T09:31:24.000Z',
    base_currency: 'EUR',
    holdings: {},
    cash_buffer: 0,
    divest_amount: 0,
    asset_class_bands: {},
    model_portfolio: {},
    fractional_shares: false,
    transaction_cost_bps: 0,
    rebalancing_threshold: 0,
    ...overrides,
  };
}

/** Facts by ISIN: `[isin, price, assetClass, currency = EUR]`. */
export function storeFacts(...rows: [isin: string, price: number | null, assetClass: string | null, currency?: string | null][]): Map<string, InstrumentFacts> {
  return new Map(rows.map(([isin, price, assetClass, currency]) => [isin, { price, assetClass, currency: currency === undefined ? 'EUR' : currency }]));
}

/** EQ1 at 100 and EQ2 at 30 (EQUITY), BD1 at 50 (FIXED_INCOME), all in EUR. */
export const FACTS = storeFacts([EQ1, 100, 'EQUITY'], [EQ2, 30, 'EQUITY'], [BD1, 50, 'FIXED_INCOME']);

/** The rate fixed on this day in the builders' facts. */
export const RATE_DATE = '2025-03-13';

/**
 * The facts with `key` given a rate to the base currency: an instrument's fact keeps its price and
 * currency; a cash key (`$USD`) becomes one unit of its currency. `rate` is the base value of one
 * unit (text), or a refusal.
 */
export function withRate(facts: ReadonlyMap<string, InstrumentFacts>, key: string, rate: string | RateFact): Map<string, InstrumentFacts> {
  const toBase: RateFact = typeof rate === 'string' ? { rate, date: RATE_DATE } : rate;
  const fact: InstrumentFacts = key.startsWith('$') ? { price: 1, currency: key.slice(1), assetClass: null } : facts.get(key)!;
  return new Map([...facts, [key, { ...fact, toBase }]]);
}
