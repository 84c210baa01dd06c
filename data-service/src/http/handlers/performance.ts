import { ProblemError, type OperationHandler } from '@platform/shared';
import type { DataPrincipal } from '../../auth/api-keys.ts';
import { futurePerformanceAnswer } from '../../simulation/answer.ts';
import { simulate, type SimulationInput } from '../../simulation/engine.ts';
import { randomSeed } from '../../simulation/random.ts';
import { planSimulation, type FuturePerformanceRequest, type SimulationLimits } from '../../simulation/request.ts';
import type { DuckStore } from '../../store/duckdb.ts';

/** POST /performance/future/: Monte Carlo quantiles of the portfolio value (decisions §12). */
export function performanceHandlers(_duck: DuckStore, limits: SimulationLimits): Record<string, OperationHandler<DataPrincipal>> {
  return {
    simulateFuturePerformance: async ({ body }) => {
      const plan = planSimulation(body as FuturePerformanceRequest, limits, randomSeed);
      if (plan.source.kind !== 'expected') throw new ProblemError(501, 'not_implemented', 'Historical returns (use_expected_returns: false) are not built yet.');
      const input: SimulationInput = { ...plan.base, ...plan.source };
      return { status: 200, body: futurePerformanceAnswer(simulate(input, plan.grid), plan.base.quantiles) };
    },
  };
}
