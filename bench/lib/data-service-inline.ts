// The data service as it solved optimizer requests before worker threads: on its event loop, one
// at a time (the baseline of `bench:optimizer`'s tenant flood). Not a setting of the service: a
// solve there holds every request of the replica.
import { createLogger, runService } from '@platform/shared';
import { loadDataConfig } from '@platform/data-service/config';
import { loadOptimizer } from '@platform/data-service/optimizer/engine';
import { EngineFailed } from '@platform/data-service/optimizer/solving';
import { startDataService } from '@platform/data-service/service';

await runService(
  'data-service',
  loadDataConfig,
  async (config, logger) => {
    const optimize = await loadOptimizer({ timeLimitSeconds: config.OPTIMIZER_TIME_LIMIT_MS / 1000 });
    const optimizerExecutor = {
      slots: 1,
      solve: async (...args: Parameters<typeof optimize>) => {
        try {
          return optimize(...args);
        } catch (error) {
          throw new EngineFailed((error as Error).message);
        }
      },
      close: async () => undefined,
    };
    return startDataService(config, logger, { optimizerExecutor });
  },
  createLogger,
);
