import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connectNats } from '@platform/shared';
import { natsLoginUrls, renderNatsConfig, writeNatsLogins, type NatsLogins } from './nats-config.ts';
import { ensureInstalled } from './os-packages.ts';
import { freePort, waitFor } from './ports.ts';
import { describeExit, exitOf, isRunning, stopProcess } from './processes.ts';

export type NatsClusterNode = {
  /** The node's `server_name`, as JetStream names a stream's leader and replicas. */
  name: string;
  port: number;
  mqttUrl?: string;
  /** The monitoring listener: `/jsz?accounts=true&streams=true` shows this node's own copy of each stream. */
  monitorUrl: string;
  /** Kills the node at once (SIGKILL), as a crash would; resolves once it has exited. */
  kill: () => Promise<void>;
  /** Starts the node again on the same ports and store; resolves once it takes connections. */
  restart: () => Promise<void>;
  /** SIGTERM, SIGKILL if it takes longer than 10 s. */
  stop: () => Promise<void>;
  running: () => boolean;
};

export type NatsCluster = {
  /** With the credentials of a user without limits, listing every node: for the tests, benchmarks and tools. */
  url: string;
  /** Each service's URL with its own credentials, listing every node (docs/adr/0026-bus-authorization.md). */
  serviceUrls: { management: string; data: string };
  users: NatsLogins['users'];
  nodes: NatsClusterNode[];
  /** Makes every running node read its configuration again (SIGHUP), as after a change of the users file. */
  reload: () => void;
  /** The server name of the JetStream meta leader once every running node names the same one. */
  metaLeader: (timeoutMs?: number) => Promise<string>;
  stop: () => Promise<void>;
};

/**
 * Starts `nodes` nats-server processes on loopback as one cluster (each routed to every other),
 * each with JetStream in a store of its own under `dir` and, with `mqtt`, an MQTT listener, and the
 * same accounts and users as a single nats-server (nats-server.ts). MQTT in a cluster keeps its
 * sessions in JetStream, which is why each node has a `server_name`. Resolves once the nodes
 * agree on a JetStream meta leader, so that streams can be made at once
 * (docs/adr/0051-replicated-streams.md).
 */
export async function startNatsCluster(options: {
  dir: string;
  nodes?: number;
  mqtt?: boolean;
  name?: string;
  log: (line: string) => void;
}): Promise<NatsCluster> {
  const binary = ensureInstalled('nats-server', 'nats-server', options.log, 'or point NATS_URL at a running NATS cluster with JetStream');
  const count = options.nodes ?? 3;
  const clusterName = options.name ?? 'platform';
  mkdirSync(options.dir, { recursive: true });
  const { passwords, users } = await writeNatsLogins(options.dir);
  const ports = [];
  for (let i = 0; i < count; i++) {
    ports.push({ client: await freePort(), route: await freePort(), monitor: await freePort(), mqtt: options.mqtt ? await freePort() : undefined });
  }
  const routes = ports.map((p) => p.route);
  const { url, serviceUrls } = natsLoginUrls(passwords, ports.map((p) => `127.0.0.1:${p.client}`).join(','));

  const nodes = ports.map((port, i) => {
    const name = `${clusterName}-${i + 1}`;
    const storeDir = `${options.dir}/${name}/jetstream`;
    mkdirSync(storeDir, { recursive: true });
    const configFile = `${options.dir}/${name}.conf`;
    const config = {
      name,
      port: port.client,
      storeDir,
      mqttPort: port.mqtt,
      monitorPort: port.monitor,
      cluster: { name: clusterName, port: port.route, routes },
    };
    writeFileSync(configFile, renderNatsConfig(config));
    return { name, port, node: natsNode({ binary, name, configFile, port: port.client, adminPassword: passwords.admin, log: options.log }) };
  });

  const stop = async () => {
    await Promise.all(nodes.map((n) => n.node.stop()));
  };
  const metaLeader = async (timeoutMs = 30_000) => {
    let leader = '';
    await waitFor(
      `the JetStream meta leader of ${clusterName}`,
      async () => {
        const running = nodes.filter((n) => n.node.running());
        const named = await Promise.all(running.map((n) => jszMetaLeader(n.port.monitor)));
        if (named.length === 0 || !named[0] || named.some((l) => l !== named[0])) throw new Error(`the nodes name ${JSON.stringify(named)}`);
        leader = named[0];
      },
      timeoutMs,
    );
    return leader;
  };
  try {
    await Promise.all(nodes.map((n) => n.node.restart()));
    await metaLeader();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    serviceUrls,
    users,
    nodes: nodes.map(({ name, port, node }) => ({
      name,
      port: port.client,
      mqttUrl: port.mqtt ? `mqtt://127.0.0.1:${port.mqtt}` : undefined,
      monitorUrl: `http://127.0.0.1:${port.monitor}`,
      ...node,
    })),
    reload: () => nodes.forEach((n) => n.node.signal('SIGHUP')),
    metaLeader,
    stop,
  };
}

/** The meta leader a node's monitoring listener names (empty while there is none). */
async function jszMetaLeader(monitorPort: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${monitorPort}/jsz`);
  const body = (await response.json()) as { meta_cluster?: { leader?: string } };
  return body.meta_cluster?.leader ?? '';
}

/** One node's process, started (again) by `restart` from the same configuration. */
function natsNode(options: { binary: string; name: string; configFile: string; port: number; adminPassword: string; log: (line: string) => void }) {
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child) await stopProcess(child, { name: options.name, signal: 'SIGTERM', graceMs: 10_000, log: options.log });
  };
  return {
    running: () => child !== undefined && isRunning(child),
    signal: (signal: NodeJS.Signals) => void (child && isRunning(child) && child.kill(signal)),
    kill: async () => {
      if (!child || !isRunning(child)) return;
      const exited = exitOf(child);
      child.kill('SIGKILL');
      await exited;
    },
    stop,
    restart: async () => {
      if (child && isRunning(child)) throw new Error(`${options.name} is running`);
      // In a process group of its own, as the single nats-server: the caller stops it.
      const started = spawn(options.binary, ['-c', options.configFile], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      child = started;
      let stderr = '';
      started.stderr?.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-4000);
      });
      const nodeUrl = `nats://admin:${options.adminPassword}@127.0.0.1:${options.port}`;
      try {
        await Promise.race([
          exitOf(started).then((exit) => Promise.reject(new Error(`${options.name} exited (${describeExit(exit)}): ${stderr}`))),
          waitFor(options.name, async () => {
            const nc = await connectNats(nodeUrl, 'probe', { reconnect: false });
            await nc.close();
          }),
        ]);
      } catch (error) {
        await stop();
        throw error;
      }
    },
  };
}
