// Entry point of the data service.
import { answerVersionFlag, createLogger, exitUnlessSupportedNode, runService } from '@platform/shared';
import { loadDataConfig } from './config.ts';
import { startDataService } from './service.ts';

exitUnlessSupportedNode('data-service', process, console.error);
if (!answerVersionFlag(process, console.log)) {
  await runService('data-service', loadDataConfig, startDataService, createLogger);
}
