import { join } from 'node:path';
import { Resources, createLogger, newUlid, type Logger, type SpanExporter } from '@platform/shared';
import type { DataService } from '@platform/data-service/service';
import type { NatsServer } from '@platform/dev-stack/nats-server';
import { freePort } from '@platform/dev-stack/ports';
import type { ServiceProcess } from '@platform/dev-stack/service-process';
import { startStack } from '@platform/dev-stack/stack';
import { createTenantWithKeys, type TenantCredentials } from '@platform/dev-stack/tenants';
import { createTestDatabase, startOwnNats, testNatsUrl, testServiceNatsUrls, testWorkDir, type TestDatabase } from './database.ts';
import { imageLauncher, platformImage, writableByImage } from './platform-image.ts';

export { newSigningKey as testSigningKey } from '@platform/dev-stack/signing-key';

export type TestTenant = TenantCredentials;

export type TestPlatform = {
  database: TestDatabase;
  managementUrl: string;
  dataUrl: string;
  /** The NATS server both services use, with the credentials of a user without limits. */
  natsUrl: string;
  /** The platform's own NATS server (`ownNats`): its users file and reload, for bus credentials. */
  natsServer?: NatsServer;
  /** The data service running in this process (its simulation counts); reading it throws when the services run as containers (PLATFORM_IMAGE). */
  dataService: DataService;
  /** The services' processes when they run as containers of an image (PLATFORM_IMAGE): their containers' names, stop, restart. */
  containers?: { management: ServiceProcess; data: ServiceProcess };
  /** Where each service answers GET /metrics (docs/adr/0024-observability.md). */
  metricsUrls: { management: string; data: string };
  /** Creates a tenant with one access key and one API key. */
  tenant: (id?: string, options?: { brokerIntegration?: 'CLIENT' | 'SERVICE' }) => Promise<TestTenant>;
  stop: () => Promise<void>;
};

/**
 * Both services in this process on free ports, against a fresh database cloned from the template
 * and the run's NATS server (or, with `ownNats`, a NATS server of its own, and the optimizer on):
 * the real stack, as `npm start` runs it. With PLATFORM_IMAGE set, both services run instead as
 * containers of that image (platform-image.ts), reached only through their ports.
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
  /** The database, owned by the caller (a server of another version, say); by default a fresh clone of the run's template. */
  database?: TestDatabase;
};

export async function startTestPlatform(env: Record<string, string> = {}, options: TestPlatformOptions = {}): Promise<TestPlatform> {
  const resources = new Resources();
  return resources.build(async () => {
    const database = options.database ?? resources.add(await createTestDatabase(), (d) => d.drop());
    const ownNats = options.ownNats ? resources.add(await startOwnNats(), (n) => n.stop()) : undefined;
    const natsUrl = ownNats?.url ?? testNatsUrl();
    // On the run's shared NATS server the optimizer stays off unless a test turns it on: its
    // durable consumer would answer other tests' requests, and its results land while they run.
    const optimizer: Record<string, string> = options.ownNats ? {} : { OPTIMIZER: 'false' };
    // The console's page and the data service must know each other's address before either starts.
    const ports = options.console ? { management: await freePort(), data: await freePort() } : undefined;
    const consoleEnv: { management: Record<string, string>; data: Record<string, string> } = ports
      ? {
          management: { CONSOLE_DATA_SERVICE_URL: `http://127.0.0.1:${ports.data}` },
          data: { CORS_ALLOWED_ORIGINS: `http://127.0.0.1:${ports.management}` },
        }
      : { management: {}, data: {} };
    const image = platformImage();
    if (image && (options.logger || options.spanExporter))
      throw new Error('a logger or span exporter needs the services in this process: unset PLATFORM_IMAGE for this test');
    // Both services and the test share one event loop here (and the machine other tests): a test's
    // own work would count as the services' overload, so shedding is off unless a test turns it on
    // (management-service/test/overload.test.ts, docs/adr/0062-overload-shedding.md).
    const shedding = { OVERLOAD_SHEDDING: 'false' };
    const managementEnv = { ...optimizer, ...shedding, ...consoleEnv.management, ...env };
    const dataEnv = {
      ...optimizer,
      ...shedding,
      // A container writes only to the folder handed to the image's user.
      DUCKDB_PATH: image ? join(writableByImage(join(testWorkDir(), `data-${newUlid()}`)), 'data.duckdb') : join(testWorkDir(), `data-${newUlid()}.duckdb`),
      REFERENCE_DIR: join(testWorkDir(), 'reference'),
      ...consoleEnv.data,
      ...env,
    };
    // The database is a clone of the migrated template; each service logs in to NATS as itself,
    // with only its permissions (docs/adr/0026-bus-authorization.md).
    const common = {
      log: () => undefined,
      resources,
      postgres: { url: database.url },
      nats: { url: natsUrl, serviceUrls: ownNats?.serviceUrls ?? testServiceNatsUrls() },
    };
    if (image) {
      const metrics = { management: await freePort(), data: await freePort() };
      // Nothing of this process's environment reaches a container: what in-process services take from it is named here.
      const shared = { LOG_LEVEL: process.env.LOG_LEVEL ?? 'error' };
      const stack = await startStack({
        ...common,
        services: {
          run: 'process',
          launcher: imageLauncher(image),
          management: { port: ports?.management, env: { ...shared, METRICS_PORT: String(metrics.management), ...managementEnv } },
          data: { port: ports?.data, env: { ...shared, METRICS_PORT: String(metrics.data), ...dataEnv } },
        },
      });
      const management = stack.processes.management[0]!;
      const data = stack.processes.data!;
      return {
        database,
        managementUrl: management.url,
        dataUrl: data.url,
        natsUrl,
        natsServer: ownNats,
        get dataService(): DataService {
          throw new Error(
            `the data service runs in a container of ${image.image} (PLATFORM_IMAGE), not in this process: this test cannot run against the image`,
          );
        },
        containers: { management, data },
        metricsUrls: { management: `http://127.0.0.1:${metrics.management}`, data: `http://127.0.0.1:${metrics.data}` },
        tenant: (id, options) => createTenantWithKeys(database.db, id, options),
        stop: () => resources.closeAll(),
      };
    }
    const stack = await startStack({
      ...common,
      services: {
        run: 'in-process',
        logger: options.logger ?? createLogger('test', process.env.LOG_LEVEL ?? 'error'),
        spanExporter: options.spanExporter,
        management: { port: ports?.management, env: managementEnv },
        // Every test platform reads the one sample reference file `npm test` generated, unless a
        // test names a directory of its own.
        data: { port: ports?.data, env: dataEnv },
      },
    });
    const management = stack.inProcess.management!;
    const data = stack.inProcess.data!;
    return {
      database,
      managementUrl: management.url,
      dataUrl: data.url,
      natsUrl,
      natsServer: ownNats,
      dataService: data,
      metricsUrls: { management: management.metricsUrl, data: data.metricsUrl },
      tenant: (id, options) => createTenantWithKeys(database.db, id, options),
      stop: () => resources.closeAll(),
    };
  });
}
