import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { futurePerformanceAnswer } from '../../simulation/answer.ts';
import type { SimulationInput } from '../../simulation/engine.ts';
import { estimateFromHistory } from '../../simulation/history.ts';
import { randomSeed } from '../../simulation/random.ts';
import { planSimulation, type FuturePerformanceRequest, type SimulationLimits } from '../../simulation/request.ts';
import type { DuckStore } from '../../store/duckdb.ts';
import { commonCloses } from '../../simulation/price-history.ts';
import type { SimulationScheduler } from '../../workers/simulation-scheduler.ts';

/**
 * POST /performance/future/: Monte Carlo quantiles of the portfolio value (docs/adr/0015-simulation-model.md). The
 * request is checked in full before anything runs; historical mode reads the mapped instruments'
 * closes from the reference data (the same for every tenant); the simulation waits in its tenant's
 * queue for a worker thread and is stopped when the client leaves (workers/simulation-scheduler.ts).
 */
export function performanceHandlers(
  duck: DuckStore,
  limits: SimulationLimits,
  scheduler: SimulationScheduler,
): Record<string, OperationHandler<DataPrincipal>> {
  return {
    simulateFuturePerformance: async ({ body, principal, signal }) => {
      const plan = planSimulation(body as FuturePerformanceRequest, limits, randomSeed);
      let input: SimulationInput;
      if (plan.source.kind === 'expected') {
        input = { ...plan.base, ...plan.source };
      } else {
        const { parameters, correlation } = estimateFromHistory(plan.classes, plan.source.isins, await commonCloses(duck, plan.source.isins));
        input = { ...plan.base, shortTerm: parameters, longTerm: parameters, cutOffYears: 0, correlation };
      }
      return { status: 200, body: futurePerformanceAnswer(await scheduler.run(principal.tenantId, input, plan.grid, signal), plan.base.quantiles) };
    },
  };
}
