import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connectNats } from '@platform/shared';
import type { BusUsersSource } from '@platform/management-service/bus/sync';
import { natsLoginUrls, renderNatsConfig, writeNatsLogins } from './nats-config.ts';
import { ensureInstalled } from './os-packages.ts';
import { waitFor } from './ports.ts';
import { describeExit, exitOf, stopProcess, type Exit } from './processes.ts';

export type NatsServer = {
  /** With the credentials of a user without limits: for the tests, benchmarks and tools. */
  url: string;
  /** Each service's URL with its own credentials and permissions (docs/adr/0026-bus-authorization.md). */
  serviceUrls: { management: string; data: string };
  /** The MQTT listener (no credentials in it: a tenant's bus credentials log in). */
  mqttUrl?: string;
  /** The users file the configuration includes, and the hashes to render it with (bus/sync.ts). */
  users: { file: string; source: BusUsersSource };
  /** Makes the server read its configuration again (SIGHUP), as after a change of the users file. */
  reload: () => void;
  process: ChildProcess;
  /** Settles once nats-server has exited, for whatever reason (also when it already had). */
  exited: Promise<Exit>;
  /** SIGTERM, SIGKILL if it takes longer than 10 s. */
  stop: () => Promise<void>;
};

/**
 * Starts nats-server with JetStream on loopback, its state in `dir`, and with `mqttPort` its MQTT
 * listener (MQTT clients read `tenants/<tenant>/events`, the NATS subject `tenants.<tenant>.events`).
 * Every connection logs in (docs/adr/0026-bus-authorization.md): the services and a local admin
 * with passwords made for this start, in the platform's account; tenants' bus credentials, each
 * tenant in its own account, once a renderer (bus/sync.ts) adds them to the users file.
 */
export async function startNatsServer(options: {
  port: number;
  mqttPort?: number;
  dir: string;
  name: string;
  log: (line: string) => void;
}): Promise<NatsServer> {
  const binary = ensureInstalled('nats-server', 'nats-server', options.log, 'or point NATS_URL at a running NATS server with JetStream');
  mkdirSync(`${options.dir}/jetstream`, { recursive: true });
  const configFile = `${options.dir}/nats.conf`;
  const { passwords, users } = await writeNatsLogins(options.dir);
  writeFileSync(configFile, renderNatsConfig({ name: options.name, port: options.port, storeDir: `${options.dir}/jetstream`, mqttPort: options.mqttPort }));
  // In a process group of its own: a Ctrl-C meant for the caller does not stop it before the
  // processes that use it; the caller stops it.
  const child = spawn(binary, ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const { url, serviceUrls } = natsLoginUrls(passwords, `127.0.0.1:${options.port}`);
  const exited = exitOf(child);
  const stop = () => stopProcess(child, { name: 'nats-server', signal: 'SIGTERM', graceMs: 10_000, log: options.log });
  try {
    await Promise.race([
      exited.then((exit) => Promise.reject(new Error(`nats-server exited (${describeExit(exit)}): ${stderr}`))),
      waitFor('nats-server', async () => {
        const nc = await connectNats(url, 'probe');
        await nc.close();
      }),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    serviceUrls,
    mqttUrl: options.mqttPort ? `mqtt://127.0.0.1:${options.mqttPort}` : undefined,
    users,
    reload: () => void child.kill('SIGHUP'),
    process: child,
    exited,
    stop,
  };
}
