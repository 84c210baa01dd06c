// Entry point of the data service.
import { createLogger, runService } from '@platform/shared';
import { loadDataConfig } from './config.ts';
import { startDataService } from './service.ts';

await runService('data-service', loadDataConfig, startDataService, createLogger);
