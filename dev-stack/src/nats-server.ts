import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connectNats } from '@platform/shared';
import { hashBusPassword } from '@platform/management-service/admin/bus-credentials';
import { SERVICE_USERS, busAccounts, renderNatsAccounts } from '@platform/management-service/bus/nats-users';
import type { BusUsersSource } from '@platform/management-service/bus/sync';
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
  const usersFile = `${options.dir}/users.conf`;
  // Random passwords, kept with the server's state so that a server started again on the same
  // folder (a test's outage, the next `npm start`) takes the clients' credentials; the hashes' cost
  // is low because the passwords are random and the tests open many connections.
  const passwordsFile = `${options.dir}/passwords.json`;
  const random = () => randomBytes(24).toString('base64url');
  const passwords = existsSync(passwordsFile)
    ? (JSON.parse(readFileSync(passwordsFile, 'utf8')) as { management: string; data: string; admin: string })
    : { management: random(), data: random(), admin: random() };
  writeFileSync(passwordsFile, JSON.stringify(passwords), { mode: 0o600 });
  const source: BusUsersSource = {
    services: { management: await hashBusPassword(passwords.management, 4), data: await hashBusPassword(passwords.data, 4) },
    admin: await hashBusPassword(passwords.admin, 4),
  };
  writeFileSync(usersFile, renderNatsAccounts(busAccounts({ ...source, credentials: [] })), { mode: 0o600 });
  writeFileSync(
    configFile,
    [
      `server_name: ${options.name}`,
      `listen: 127.0.0.1:${options.port}`,
      `jetstream {`,
      `  store_dir: "${options.dir}/jetstream"`,
      `}`,
      ...(options.mqttPort ? [`mqtt {`, `  listen: 127.0.0.1:${options.mqttPort}`, `}`] : []),
      // The accounts and their users, at the top level (docs/adr/0026-bus-authorization.md).
      // Relative to this file: nats-server resolves includes from the including file's folder.
      `include "users.conf"`,
      '',
    ].join('\n'),
  );
  // In a process group of its own: a Ctrl-C meant for the caller does not stop it before the
  // processes that use it; the caller stops it.
  const child = spawn(binary, ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const address = (user: string, password: string) => `nats://${user}:${password}@127.0.0.1:${options.port}`;
  const url = address('admin', passwords.admin);
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
    serviceUrls: { management: address(SERVICE_USERS.management, passwords.management), data: address(SERVICE_USERS.data, passwords.data) },
    mqttUrl: options.mqttPort ? `mqtt://127.0.0.1:${options.mqttPort}` : undefined,
    users: { file: usersFile, source },
    reload: () => void child.kill('SIGHUP'),
    process: child,
    exited,
    stop,
  };
}
