import type { OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { futurePerformanceAnswer } from '../../simulation/answer.ts';
import type { SimulationInput } from '../../simulation/engine.ts';
import { estimateFromHistory } from '../../simulation/history.ts';
import { randomSeed } from '../../simulation/random.ts';
import { planSimulation, type FuturePerformanceRequest, type SimulationLimits } from '../../simulation/request.ts';
import type { DuckStore } from '../../store/duckdb.ts';
import { commonCloses } from '../../store/price-history.ts';
import type { SimulationRunner } from '../../workers/simulation-pool.ts';

/**
 * POST /performance/future/: Monte Carlo quantiles of the portfolio value (decisions §12). The
 * request is checked in full before anything runs; historical mode reads the mapped instruments'
 * closes from the reference data (the same for every tenant); the simulation runs on a worker
 * thread (SIMULATION_THREADS).
 */
export function performanceHandlers(duck: DuckStore, limits: SimulationLimits, runner: SimulationRunner): Record<string, OperationHandler<DataPrincipal>> {
  return {
    simulateFuturePerformance: async ({ body }) => {
      const plan = planSimulation(body as FuturePerformanceRequest, limits, randomSeed);
      let input: SimulationInput;
      if (plan.source.kind === 'expected') {
        input = { ...plan.base, ...plan.source };
      } else {
        const { parameters, correlation } = estimateFromHistory(plan.classes, plan.source.isins, await commonCloses(duck, plan.source.isins));
        input = { ...plan.base, shortTerm: parameters, longTerm: parameters, cutOffYears: 0, correlation };
      }
      return { status: 200, body: futurePerformanceAnswer(await runner.run(input, plan.grid), plan.base.quantiles) };
    },
  };
}
