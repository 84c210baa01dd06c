// Entry point of the data service.
import { answerVersionFlag, createLogger, runService } from '@platform/shared';
import { loadDataConfig } from './config.ts';
import { startDataService } from './service.ts';

if (!answerVersionFlag(process, console.log)) {
  await runService('data-service', loadDataConfig, startDataService, createLogger);
}
