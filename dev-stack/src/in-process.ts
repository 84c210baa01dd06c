// Both services in this process, as the tests run them: each service's configuration is read from
// the environment given, exactly as its main.ts reads process.env.
import { type Logger, type SpanExporter } from '@platform/shared';
import { loadManagementConfig } from '@platform/management-service/config';
import { startManagementService, type RunningService } from '@platform/management-service/service';
import { loadDataConfig } from '@platform/data-service/config';
import { startDataService, type DataService } from '@platform/data-service/service';

export type InProcessOptions = { logger: Logger; spanExporter?: SpanExporter };

export type InProcessManagement = RunningService;
export type InProcessData = DataService;

export function startManagementInProcess(env: Record<string, string>, options: InProcessOptions): Promise<InProcessManagement> {
  return startManagementService(loadManagementConfig(env), options.logger, { spanExporter: options.spanExporter });
}

export function startDataInProcess(env: Record<string, string>, options: InProcessOptions): Promise<InProcessData> {
  return startDataService(loadDataConfig(env), options.logger, { spanExporter: options.spanExporter });
}
