// The production shape on one machine (docs/scaling.md "Topology on one machine"): Postgres with
// failover (Patroni, etcd, HAProxy on /primary), a three-node NATS cluster with JetStream and MQTT
// and every stream in three copies, two replicas of each service, and HAProxy in HTTP mode in front
// of each service. stop() ends them in reverse order: HAProxy, the replicas, NATS, Postgres.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import knex from 'knex';
import { createBusCredential } from '@platform/management-service/admin/bus-credentials';
import { startBusUsersSync } from '@platform/management-service/bus/sync';
import { Resources } from '@platform/shared';
import { serviceReplicasListener } from './haproxy-config.ts';
import { startHAProxy, type HAProxy } from './haproxy.ts';
import { startNatsCluster, type NatsCluster } from './nats-cluster.ts';
import { startPatroni, type PatroniStack } from './patroni.ts';
import { freePort } from './ports.ts';
import { startServiceProcess, type ServiceOutput, type ServiceProcess } from './service-process.ts';
import { startStack } from './stack.ts';
import { createTenantWithKeys, type TenantCredentials } from './tenants.ts';

export type TopologyOptions = {
  /** Everything the topology writes; emptied at start, as Patroni's data of an earlier run would not match the new etcd. */
  dir: string;
  log: (line: string) => void;
  /** HAProxy's listeners; free ports unless given. */
  managementPort?: number;
  dataPort?: number;
  output?: ServiceOutput;
  /** Each service in a process group of its own, for a caller that handles Ctrl-C (`npm run topology`). */
  ownProcessGroups?: boolean;
  /** The data service's generated sample universe (its defaults unless given; smaller starts faster). */
  sample?: { instruments: number; years: number };
  /** The demo tenant's id. */
  tenantId?: string;
  /** Robo-advice optimizations (the nightly run and operator requests); off unless asked for, as they cost CPU at start. */
  optimizer?: boolean;
  /** Added to every replica's environment (a benchmark's pool size, say). */
  env?: { management?: Record<string, string>; data?: Record<string, string> };
  /** The caller's resources: what starts is added to them, and the caller closes them (also after a failed or interrupted start). */
  resources?: Resources;
};

export type Topology = {
  /** Through HAProxy: whichever replica is up. */
  managementUrl: string;
  dataUrl: string;
  /** The superuser through Patroni's HAProxy: always the current primary. */
  databaseUrl: string;
  natsUrl: string;
  mqttUrls: string[];
  /** With the tenant's login on NATS and MQTT (docs/adr/0026-bus-authorization.md). */
  tenant: TenantCredentials & { busUsername: string; busPassword: string };
  replicas: { management: ServiceProcess[]; data: ServiceProcess[] };
  patroni: PatroniStack;
  nats: NatsCluster;
  /** The services' HAProxy: listeners `management` and `data`, servers named as the replicas; counters and server states at run time. */
  proxy: HAProxy;
  stop: () => Promise<void>;
};

const REPLICAS = 2;
// Every stream in as many copies as the cluster has nodes, as in production (docs/adr/0051-replicated-streams.md).
const STREAM_REPLICAS = '3';

export async function startTopology(options: TopologyOptions): Promise<Topology> {
  const { dir, log } = options;
  const resources = options.resources ?? new Resources();
  const start = async (): Promise<Topology> => {
    rmSync(dir, { recursive: true, force: true });
    for (let replica = 0; replica < REPLICAS; replica++) mkdirSync(join(dir, `data-${replica}`), { recursive: true });
    log('starting Postgres 15 with failover (etcd, two Patroni nodes, HAProxy on /primary)');
    const patroni = resources.add(await startPatroni({ dir: join(dir, 'patroni'), log }), (p) => p.stop());
    log('starting a three-node NATS cluster with JetStream and MQTT');
    const nats = resources.add(await startNatsCluster({ dir: join(dir, 'nats'), mqtt: true, log }), (n) => n.stop());

    let tenant: Topology['tenant'] | undefined;
    const sample: Record<string, string> = options.sample
      ? { SAMPLE_INSTRUMENTS: String(options.sample.instruments), SAMPLE_YEARS: String(options.sample.years) }
      : {};
    const common = { NATS_STREAM_REPLICAS: STREAM_REPLICAS, OPTIMIZER: options.optimizer ? 'true' : 'false' };
    const env = { management: { ...common, ...options.env?.management }, data: { ...common, ...options.env?.data } };
    // The first replica of each service starts with the database and signing key of startStack; the others join it.
    const stack = await startStack({
      log,
      resources,
      postgres: { url: patroni.databaseUrl },
      migrate: true,
      poolMax: 2,
      nats: { url: nats.url, serviceUrls: nats.serviceUrls },
      prepare: async ({ db, databaseUrl }) => {
        const keys = await createTenantWithKeys(db, options.tenantId);
        const bus = await createBusCredential(db, keys.tenantId, 'created by the topology');
        tenant = { ...keys, busUsername: bus.username, busPassword: bus.password };
        // Tenants' bus logins reach every node through the cluster's shared users file, as with `npm start`.
        const syncDb = knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 1 } });
        const sync = startBusUsersSync({ db: syncDb, file: nats.users.file, source: nats.users.source, intervalMs: 2_000, reload: nats.reload, log });
        resources.add(sync, () => sync.stop().then(() => syncDb.destroy()));
        await sync.syncNow();
      },
      services: {
        run: 'process',
        output: options.output,
        ownProcessGroups: options.ownProcessGroups,
        management: { replicas: REPLICAS, env: env.management },
        data: { env: { ...env.data, DUCKDB_PATH: join(dir, 'data-0', 'data.duckdb'), SAMPLE_DATA: 'true', ...sample } },
      },
    });
    const management = stack.processes.management;
    const data = [stack.processes.data!];
    for (let replica = 1; replica < REPLICAS; replica++) {
      // Each data replica has its DuckDB file of its own; the reference files are shared, read only.
      const started = await startServiceProcess({
        log,
        name: `data-${replica}`,
        service: 'data',
        port: await freePort(),
        output: options.output,
        ownProcessGroup: options.ownProcessGroups,
        env: {
          ...env.data,
          DATABASE_URL: stack.databaseUrl,
          NATS_URL: stack.serviceNatsUrls.data,
          METRICS_PORT: '0',
          DUCKDB_PATH: join(dir, `data-${replica}`, 'data.duckdb'),
          REFERENCE_DIR: join(dir, 'data-0', 'reference'),
        },
      });
      resources.add(started, (s) => s.stop());
      data.push(started);
    }

    const ports = { management: options.managementPort ?? (await freePort()), data: options.dataPort ?? (await freePort()) };
    const portOf = (p: ServiceProcess) => Number(new URL(p.url).port);
    log('starting HAProxy in front of the replicas');
    const proxy = resources.add(
      await startHAProxy({
        dir: join(dir, 'haproxy'),
        log,
        listeners: [
          serviceReplicasListener({ name: 'management', port: ports.management, replicas: management.map((p) => ({ name: p.name, port: portOf(p) })) }),
          serviceReplicasListener({ name: 'data', port: ports.data, replicas: data.map((p) => ({ name: p.name, port: portOf(p) })) }),
        ],
      }),
      (h) => h.stop(),
    );

    let stopped: Promise<void> | undefined;
    return {
      managementUrl: `http://127.0.0.1:${ports.management}`,
      dataUrl: `http://127.0.0.1:${ports.data}`,
      databaseUrl: patroni.databaseUrl,
      natsUrl: nats.url,
      mqttUrls: nats.nodes.flatMap((n) => (n.mqttUrl ? [n.mqttUrl] : [])),
      tenant: tenant!,
      replicas: { management, data },
      patroni,
      nats,
      proxy,
      stop: () => (stopped ??= resources.closeAll()),
    };
  };
  return options.resources ? start() : resources.build(start);
}
