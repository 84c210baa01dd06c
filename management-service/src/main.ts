// Entry point of the management service.
import { createLogger, runService } from '@platform/shared';
import { loadManagementConfig } from './config.ts';
import { startManagementService } from './service.ts';

await runService('management-service', loadManagementConfig, startManagementService, createLogger);
