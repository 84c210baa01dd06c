// `npm run topology`: the production shape on one machine (docs/scaling.md "Topology on one
// machine"): Postgres 15 with failover under Patroni, a three-node NATS cluster, two replicas of
// each service and HAProxy in front of each. Everything is made anew under .data/topology/ at each
// start (Patroni's data of an earlier run would not match the new etcd); the URLs and the demo
// tenant's credentials go to .data/topology.json. Ctrl-C, SIGINT or SIGTERM stops every process.
// MANAGEMENT_PORT / DATA_PORT move HAProxy's listeners; PLATFORM_DATA_DIR moves .data/.
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Resources } from '@platform/shared';
import { postgresSystemUser } from '@platform/dev-stack/postgres';
import { startTopology, type Topology } from '@platform/dev-stack/topology';
import { onStopSignals } from './lib/stop-signals.ts';

const DATA = resolve(process.env.PLATFORM_DATA_DIR ?? '.data');
const MANAGEMENT_PORT = Number(process.env.MANAGEMENT_PORT ?? 8080);
const DATA_PORT = Number(process.env.DATA_PORT ?? 8081);
const log = (line: string) => console.log(`[topology] ${line}`);

// What runs is added to `resources` as it starts, so that a Ctrl-C during the start stops what is already there.
const resources = new Resources();
let topology: Topology | undefined;
let stopping = false;

async function stopAll(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  log('stopping');
  await resources.closeAll().catch((error) => log((error as Error).message));
  process.exit(code);
}
// Ctrl-C stops everything in order; a later one exits at once, as with `npm start`.
onStopSignals({ stop: () => void stopAll(0), exit: () => process.exit(1) });

try {
  // As root, etcd, Patroni and Postgres run as the postgres system user, which must traverse the
  // data folder to reach their own: then it is root:postgres 0710, as `npm start` leaves it.
  mkdirSync(DATA, { recursive: true });
  const user = postgresSystemUser();
  if (user) chownSync(DATA, process.getuid!(), user.gid);
  chmodSync(DATA, user ? 0o710 : 0o700);
  topology = await startTopology({
    dir: `${DATA}/topology`,
    log,
    managementPort: MANAGEMENT_PORT,
    dataPort: DATA_PORT,
    output: 'prefixed',
    ownProcessGroups: true,
    tenantId: 'demo',
    resources,
  });
  const t = topology;
  const file = `${DATA}/topology.json`;
  const written = {
    tenant_id: t.tenant.tenantId,
    management_url: t.managementUrl,
    data_url: t.dataUrl,
    access_key_id: t.tenant.accessKeyId,
    secret_access_key: t.tenant.secret,
    api_key: t.tenant.apiKey,
    bus_username: t.tenant.busUsername,
    bus_password: t.tenant.busPassword,
    database_url: t.databaseUrl,
    nats_url: t.natsUrl,
    mqtt_urls: t.mqttUrls,
  };
  writeFileSync(file, JSON.stringify(written, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  const replicas = (list: { name: string; url: string }[]) => list.map((r) => `${r.name} ${r.url}`).join(', ');
  log(`management interface: ${t.managementUrl} (HAProxy over ${replicas(t.replicas.management)})`);
  log(`data interface:       ${t.dataUrl} (HAProxy over ${replicas(t.replicas.data)})`);
  log(`Postgres 15:          ${t.patroni.nodes.map((n) => n.name).join(', ')} under Patroni, the primary through HAProxy`);
  log(
    `NATS:                 ${t.nats.nodes.map((n) => `${n.name} :${n.port}`).join(', ')}; MQTT ${t.mqttUrls.join(', ')} (bus_username and bus_password of the file below)`,
  );
  log(`demo tenant credentials and URLs: ${file}`);
  log('ready; Ctrl-C stops everything');
} catch (error) {
  if (!stopping) console.error(`[topology] ${(error as Error).message}`);
  await stopAll(1);
}
