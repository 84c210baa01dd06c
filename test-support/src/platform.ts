import { join } from 'node:path';
import { exportPKCS8, generateKeyPair } from 'jose';
import { Resources, createLogger, newUlid, type Logger, type SpanExporter } from '@platform/shared';
import { loadManagementConfig } from '../../management-service/src/config.ts';
import { startManagementService } from '../../management-service/src/service.ts';
import { createAccessKey, createApiKey, createTenant } from '../../management-service/src/admin/provisioning.ts';
import { loadDataConfig } from '../../data-service/src/config.ts';
import { startDataService, type DataService } from '../../data-service/src/service.ts';
import { createTestDatabase, startOwnNats, testNatsUrl, testServiceNatsUrls, testWorkDir, type TestDatabase } from './database.ts';
import type { NatsServer } from './nats-server.ts';
import { freePort } from './ports.ts';

export type TestTenant = { tenantId: string; accessKeyId: string; secret: string; apiKey: string };

export type TestPlatform = {
  database: TestDatabase;
  managementUrl: string;
  dataUrl: string;
  /** The NATS server both services use, with the credentials of a user without limits. */
  natsUrl: string;
  /** The platform's own NATS server (`ownNats`): its users file and reload, for bus credentials. */
  natsServer?: NatsServer;
  /** The data service running in this process (its simulation counts). */
  dataService: DataService;
  /** Where each service answers GET /metrics (docs/adr/0024-observability.md). */
  metricsUrls: { management: string; data: string };
  /** Creates a tenant with one access key and one API key. */
  tenant: (id?: string, options?: { brokerIntegration?: 'CLIENT' | 'SERVICE' }) => Promise<TestTenant>;
  stop: () => Promise<void>;
};

export async function testSigningKey(): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return exportPKCS8(privateKey);
}

/**
 * Both services in this process on free ports, against a fresh database cloned from the template
 * and the run's NATS server (or, with `ownNats`, a NATS server of its own, and the optimizer on):
 * the real stack, as `npm start` runs it.
 */
export type TestPlatformOptions = {
  ownNats?: boolean;
  /** The services' logger (a test that reads their log lines); by default JSON lines at LOG_LEVEL. */
  logger?: Logger;
  /** Receives every span both services end (by default none is exported). */
  spanExporter?: SpanExporter;
  /**
   * The administration console as `npm start` serves it: the management service names the data
   * service's URL to it, and the data service allows the console's origin (CORS).
   */
  console?: boolean;
};

export async function startTestPlatform(env: Record<string, string> = {}, options: TestPlatformOptions = {}): Promise<TestPlatform> {
  const resources = new Resources();
  return resources.build(async () => {
    const database = resources.add(await createTestDatabase(), (d) => d.drop());
    const ownNats = options.ownNats ? resources.add(await startOwnNats(), (n) => n.stop()) : undefined;
    const natsUrl = ownNats?.url ?? testNatsUrl();
    // Each service logs in as itself, with only its permissions (docs/adr/0026-bus-authorization.md).
    const serviceUrls = ownNats?.serviceUrls ?? testServiceNatsUrls();
    const logger = options.logger ?? createLogger('test', process.env.LOG_LEVEL ?? 'error');
    // On the run's shared NATS server the optimizer stays off unless a test turns it on: its
    // durable consumer would answer other tests' requests, and its results land while they run.
    const common = {
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: database.url,
      NATS_URL: natsUrl,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
      METRICS_PORT: '0',
      ...(options.ownNats ? {} : { OPTIMIZER: 'false' }),
    };
    // The console's page and the data service must know each other's address before either starts.
    const ports = options.console ? { management: String(await freePort()), data: String(await freePort()) } : undefined;
    const consoleEnv = ports
      ? {
          management: { PORT: ports.management, CONSOLE_DATA_SERVICE_URL: `http://127.0.0.1:${ports.data}` },
          data: { PORT: ports.data, CORS_ALLOWED_ORIGINS: `http://127.0.0.1:${ports.management}` },
        }
      : { management: {}, data: {} };
    const management = resources.add(
      await startManagementService(
        loadManagementConfig({
          ...common,
          NATS_URL: serviceUrls.management,
          JWT_PRIVATE_KEY: await testSigningKey(),
          MIGRATE_ON_START: 'false',
          ...consoleEnv.management,
          ...env,
        }),
        logger,
        { spanExporter: options.spanExporter },
      ),
      (m) => m.stop(),
    );
    // Every test platform reads the one sample reference file `npm test` generated, unless a test
    // names a directory of its own.
    const dataConfig = loadDataConfig({
      ...common,
      NATS_URL: serviceUrls.data,
      DUCKDB_PATH: join(testWorkDir(), `data-${newUlid()}.duckdb`),
      REFERENCE_DIR: join(testWorkDir(), 'reference'),
      ...consoleEnv.data,
      ...env,
    });
    const data = resources.add(await startDataService(dataConfig, logger, { spanExporter: options.spanExporter }), (d) => d.stop());
    return {
      database,
      managementUrl: management.url,
      dataUrl: data.url,
      natsUrl,
      natsServer: ownNats,
      dataService: data,
      metricsUrls: { management: management.metricsUrl, data: data.metricsUrl },
      tenant: async (id = `t-${newUlid().toLowerCase()}`, options = {}) => {
        await createTenant(database.db, { id, brokerIntegration: options.brokerIntegration });
        const access = await createAccessKey(database.db, id);
        const api = await createApiKey(database.db, id);
        return { tenantId: id, accessKeyId: access.access_key_id, secret: access.secret_access_key, apiKey: api.api_key };
      },
      stop: () => resources.closeAll(),
    };
  });
}
