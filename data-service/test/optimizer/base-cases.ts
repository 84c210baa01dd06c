// Requests whose instruments and cash are all in the base currency, drawn from a fixed seed: the
// regression cases of base-currency portfolios (base-currency.test.ts).
import type { InstrumentFacts, OptimizerRequest } from '../../src/optimizer/engine.ts';
import { optimizerRequest } from './fixtures.ts';
import { seededRandom } from '@platform/test-support/random';

const ISINS = ['IE00B4L5Y983', 'IE00B3F81R35', 'IE00B5BMR087', 'US0378331005', 'DE0005140008'];
const CLASSES = ['EQUITY', 'FIXED_INCOME', null];

export type BaseCase = { request: OptimizerRequest; facts: Map<string, InstrumentFacts> };

export function baseCases(count: number, seed = 20261128): BaseCase[] {
  const rnd = seededRandom(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(rnd() * items.length)]!;
  const cents = (max: number) => Math.round(rnd() * max * 100) / 100;
  const cases: BaseCase[] = [];
  for (let n = 0; n < count; n++) {
    const facts = new Map<string, InstrumentFacts>();
    const holdings: Record<string, number> = { $EUR: rnd() < 0.2 ? 0 : cents(50_000) };
    const model: Record<string, number> = {};
    const fractional = rnd() < 0.5;
    let room = 1;
    for (const isin of ISINS) {
      if (rnd() < 0.3) continue;
      facts.set(isin, { price: cents(500) + 1, currency: 'EUR', assetClass: pick(CLASSES) });
      if (rnd() < 0.5) holdings[isin] = fractional && rnd() < 0.3 ? Math.round(rnd() * 100_000) / 1000 : Math.floor(rnd() * 200);
      if (rnd() < 0.7) {
        const weight = Math.floor(rnd() * room * 100) / 100;
        model[isin] = weight;
        room -= weight;
      }
    }
    const bands: Record<string, [number, number]> = {};
    if (rnd() < 0.4) bands.EQUITY = [Math.floor(rnd() * 40) / 100, 0.4 + Math.floor(rnd() * 60) / 100];
    cases.push({
      request: optimizerRequest({
        holdings,
        model_portfolio: model,
        asset_class_bands: bands,
        cash_buffer: pick([0, 0, 0.02, 0.05]),
        divest_amount: pick([0, 0, 0, 1000, 1e100]),
        fractional_shares: fractional,
        transaction_cost_bps: pick([0, 5, 25]),
        rebalancing_threshold: pick([0, 0.05]),
      }),
      facts,
    });
  }
  return cases;
}
