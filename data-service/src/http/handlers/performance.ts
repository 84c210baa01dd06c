import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import type { FxCurrencies, FxReader } from '../../fx/store.ts';
import { futurePerformanceAnswer } from '../../simulation/answer.ts';
import { amountRateDate, amountsInCurrency, checkKnownCurrency, closesInCurrency } from '../../simulation/currency.ts';
import { formatDay } from '../../simulation/dates.ts';
import { buildGrid } from '../../simulation/grid.ts';
import type { SimulationInput } from '../../simulation/engine.ts';
import { estimateFromHistory, MIN_CLOSES, type CommonCloses } from '../../simulation/history.ts';
import { randomSeed } from '../../simulation/random.ts';
import { planSimulation, type FuturePerformanceRequest, type SimulationLimits } from '../../simulation/request.ts';
import type { DuckStore } from '../../store/duckdb.ts';
import { commonCloses, instrumentCurrencies } from '../../simulation/price-history.ts';
import { UnknownValue } from '../../domain/errors.ts';
import type { SimulationScheduler } from '../../workers/simulation-scheduler.ts';

type Fx = { read: FxReader; currencies: FxCurrencies };

/**
 * POST /performance/future/: Monte Carlo quantiles of the portfolio value (docs/adr/0015-simulation-model.md). The
 * request is checked in full before anything runs; the amounts are converted from `amount_currency`
 * and historical mode reads the mapped instruments' closes from the reference data (the same for
 * every tenant), converted to `currency`; the simulation waits in its tenant's queue for a worker
 * thread and is stopped when the client leaves (workers/simulation-scheduler.ts).
 */
export function performanceHandlers(
  duck: DuckStore,
  fx: Fx,
  simulation: { limits: SimulationLimits; scheduler: SimulationScheduler; fxMaxAgeDays: number },
  now: () => Date = () => new Date(),
): Record<string, OperationHandler<DataPrincipal>> {
  const { limits, scheduler, fxMaxAgeDays } = simulation;
  return {
    simulateFuturePerformance: async ({ body, principal, signal }) => {
      const request = body as FuturePerformanceRequest;
      const plan = planSimulation(request, limits, randomSeed);
      const currency = request.currency;
      const amountCurrency = request.amount_currency ?? currency;
      let { base, grid } = plan;
      if (currency !== undefined && amountCurrency !== undefined && amountCurrency !== currency) {
        const known = await fx.currencies();
        checkKnownCurrency(currency, known, 'currency');
        checkKnownCurrency(amountCurrency, known, 'amount_currency');
        const asOf = amountRateDate(request.start_date, now().toISOString().slice(0, 10));
        const rates = await fx.read([amountCurrency, currency], { from: asOf, to: asOf });
        base = { ...base, ...amountsInCurrency(base, amountCurrency, currency, asOf, rates, fxMaxAgeDays) };
        // The grid carries the deposits: the same dates, the converted amounts.
        grid = buildGrid(base);
      }
      let input: SimulationInput;
      if (plan.source.kind === 'expected') {
        input = { ...base, ...plan.source };
      } else {
        const { isins } = plan.source;
        let history = await commonCloses(duck, isins);
        if (currency !== undefined) history = await inCurrency(history, isins, plan.classes, currency);
        const { parameters, correlation } = estimateFromHistory(plan.classes, isins, history);
        input = { ...base, shortTerm: parameters, longTerm: parameters, cutOffYears: 0, correlation };
      }
      return { status: 200, body: futurePerformanceAnswer(await scheduler.run(principal.tenantId, input, grid, signal), base.quantiles) };
    },
  };

  /**
   * The closes in `currency`, read with one range of rates for the whole history. A history that
   * estimateFromHistory refuses anyway (an unknown instrument, too few common closes) is left as it
   * is, so that its refusal is the one the client sees.
   */
  async function inCurrency(history: CommonCloses, isins: string[], classes: string[], currency: string): Promise<CommonCloses> {
    const t = history.days.length;
    if (t < MIN_CLOSES || history.available.some((n) => n < MIN_CLOSES)) return history;
    const locs = classes.map((name) => ['body', 'asset_class_mapping', name]);
    const currencies = (await instrumentCurrencies(duck, isins)).map((c, i) => c ?? noCurrency(locs[i]!, isins[i]!));
    if (currencies.every((c) => c === currency)) return history;
    checkKnownCurrency(currency, await fx.currencies(), 'currency');
    const rates = await fx.read([...currencies, currency], { from: formatDay(history.days[0]!), to: formatDay(history.days[t - 1]!) });
    return closesInCurrency(history, currencies, currency, rates, fxMaxAgeDays, locs);
  }
}

function noCurrency(loc: string[], isin: string): never {
  throw new UnknownValue(loc, `instrument ${isin} has no currency in the reference data: its closes cannot be converted`);
}
