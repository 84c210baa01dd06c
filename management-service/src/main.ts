// Entry point of the management service.
import { answerVersionFlag, createLogger, exitUnlessSupportedNode, runService } from '@platform/shared';
import { loadManagementConfig } from './config.ts';
import { startManagementService } from './service.ts';

exitUnlessSupportedNode('management-service', process, console.error);
if (!answerVersionFlag(process, console.log)) {
  await runService('management-service', loadManagementConfig, startManagementService, createLogger);
}
