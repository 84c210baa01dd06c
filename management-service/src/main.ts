// Entry point of the management service.
import { answerVersionFlag, createLogger, runService } from '@platform/shared';
import { loadManagementConfig } from './config.ts';
import { startManagementService } from './service.ts';

if (!answerVersionFlag(process, console.log)) {
  await runService('management-service', loadManagementConfig, startManagementService, createLogger);
}
