import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hashBusPassword } from '@platform/management-service/admin/bus-credentials';
import { SERVICE_USERS, busAccounts, renderNatsAccounts } from '@platform/management-service/bus/nats-users';
import type { BusUsersSource } from '@platform/management-service/bus/sync';

export type NatsPasswords = { management: string; data: string; admin: string };

export type NatsLogins = {
  passwords: NatsPasswords;
  /** The users file the configuration includes, and the hashes to render it with (bus/sync.ts). */
  users: { file: string; source: BusUsersSource };
};

/**
 * The logins of a nats-server (or of every node of a cluster) started from `dir`: passwords of the
 * services and of a local admin, and the users file rendered from them in `dir`.
 */
export async function writeNatsLogins(dir: string): Promise<NatsLogins> {
  const usersFile = `${dir}/users.conf`;
  // Random passwords, kept with the server's state so that a server started again on the same
  // folder (a test's outage, the next `npm start`) takes the clients' credentials; the hashes' cost
  // is low because the passwords are random and the tests open many connections.
  const passwordsFile = `${dir}/passwords.json`;
  const random = () => randomBytes(24).toString('base64url');
  const passwords = existsSync(passwordsFile)
    ? (JSON.parse(readFileSync(passwordsFile, 'utf8')) as NatsPasswords)
    : { management: random(), data: random(), admin: random() };
  writeFileSync(passwordsFile, JSON.stringify(passwords), { mode: 0o600 });
  const source: BusUsersSource = {
    services: { management: await hashBusPassword(passwords.management, 4), data: await hashBusPassword(passwords.data, 4) },
    admin: await hashBusPassword(passwords.admin, 4),
  };
  writeFileSync(usersFile, renderNatsAccounts(busAccounts({ ...source, credentials: [] })), { mode: 0o600 });
  return { passwords, users: { file: usersFile, source } };
}

/**
 * The URLs the clients log in with: `hosts` is one `host:port` or a cluster's, comma-separated
 * after the first (the form connectNats reads).
 */
export function natsLoginUrls(passwords: NatsPasswords, hosts: string) {
  const address = (user: string, password: string) => `nats://${user}:${password}@${hosts}`;
  return {
    url: address('admin', passwords.admin),
    serviceUrls: { management: address(SERVICE_USERS.management, passwords.management), data: address(SERVICE_USERS.data, passwords.data) },
  };
}

export type NatsNodeConfig = {
  name: string;
  port: number;
  storeDir: string;
  mqttPort?: number;
  /** The monitoring listener (`/jsz`, `/routez`), which a cluster's start reads its JetStream leader from. */
  monitorPort?: number;
  /** A node of a cluster: its route listener and every node's route port (its own included). */
  cluster?: { name: string; port: number; routes: number[] };
};

/**
 * The configuration text of one nats-server on loopback with JetStream, optionally MQTT and a
 * cluster's routes; its accounts and users come from `users.conf` beside it.
 */
export function renderNatsConfig(node: NatsNodeConfig): string {
  const cluster = node.cluster;
  return [
    `server_name: ${node.name}`,
    `listen: 127.0.0.1:${node.port}`,
    ...(node.monitorPort ? [`http: 127.0.0.1:${node.monitorPort}`] : []),
    `jetstream {`,
    `  store_dir: "${node.storeDir}"`,
    `}`,
    ...(node.mqttPort ? [`mqtt {`, `  listen: 127.0.0.1:${node.mqttPort}`, `}`] : []),
    ...(cluster
      ? [
          `cluster {`,
          `  name: ${cluster.name}`,
          `  listen: 127.0.0.1:${cluster.port}`,
          `  routes: [`,
          ...cluster.routes.map((port) => `    nats-route://127.0.0.1:${port}`),
          `  ]`,
          `}`,
        ]
      : []),
    // The accounts and their users, at the top level (docs/adr/0026-bus-authorization.md).
    // Relative to this file: nats-server resolves includes from the including file's folder.
    `include "users.conf"`,
    '',
  ].join('\n');
}
