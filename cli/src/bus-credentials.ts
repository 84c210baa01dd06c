// `npm run cli -- bus-credentials …`: tenants' credentials on the event bus (NATS and its MQTT
// listener), and the renderer that keeps the NATS server's users file equal to the database
// (docs/adr/0026-bus-authorization.md).
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Knex } from 'knex';
import { createBusCredential, hashBusPassword } from '@platform/management-service/admin/bus-credentials';
import { signalNatsServer, startBusUsersSync, writeBusUsers, type BusUsersSource } from '@platform/management-service/bus/sync';
import { listBusCredentials, revokeBusCredential } from '@platform/management-service/store/bus-credentials';

/** A bcrypt hash from `NAME` or the file `NAME_FILE` names (a mounted Secret). */
function hashFromEnv(name: string): string {
  const value = process.env[name] ?? (process.env[`${name}_FILE`] ? readFileSync(process.env[`${name}_FILE`]!, 'utf8').trim() : undefined);
  if (!value) throw new Error(`Set ${name} (or ${name}_FILE) to the bcrypt hash of the service's NATS password (bus-credentials hash-password makes one).`);
  return value;
}

export function addBusCredentialCommands(program: Command, withDb: <T>(work: (db: Knex) => Promise<T>) => Promise<void>, openDb: () => Knex): void {
  const bus = program.command('bus-credentials').description("tenants' subscribers on the event bus (NATS and MQTT): user name and password");
  bus
    .command('create <tenant>')
    .description("create a credential that reads only the tenant's events; the password is shown once")
    .option('--description <text>')
    .action((tenantId: string, o: { description?: string }) => withDb((db) => createBusCredential(db, tenantId, o.description)));
  bus
    .command('list [tenant]')
    .description('list credentials (ids, never passwords)')
    .action((tenantId?: string) => withDb((db) => listBusCredentials(db, tenantId)));
  bus
    .command('revoke <id>')
    .description('revoke a credential: the NATS server refuses it, and drops its connections, at its next reload of the users')
    .action((id: string) => withDb(async (db) => ({ revoked: await revokeBusCredential(db, id) })));
  bus
    .command('hash-password')
    .description("bcrypt hash of a service's NATS password read from standard input (for NATS_MANAGEMENT_PASSWORD_HASH / NATS_DATA_PASSWORD_HASH)")
    .action(async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      const password = Buffer.concat(chunks).toString('utf8').trim();
      if (!password) throw new Error('No password on standard input.');
      console.log(await hashBusPassword(password));
    });
  bus
    .command('sync')
    .description(
      'render the NATS accounts and users file from the database (services from NATS_MANAGEMENT_PASSWORD_HASH and NATS_DATA_PASSWORD_HASH, or their _FILE) and, when it changed, reload nats-server by SIGHUP; repeats every --interval-ms unless --once',
    )
    .requiredOption('--users-file <file>', 'the file the server configuration includes at its top level (an accounts block)')
    .option('--pid-file <file>', "nats-server's pid_file (needed unless --once)")
    .option('--interval-ms <n>', 'how often the database is read: the bound on a revocation taking effect', '5000')
    .option('--once', 'render once and exit (before nats-server starts)')
    .action(async (o: { usersFile: string; pidFile?: string; intervalMs: string; once?: boolean }) => {
      const source: BusUsersSource = { services: { management: hashFromEnv('NATS_MANAGEMENT_PASSWORD_HASH'), data: hashFromEnv('NATS_DATA_PASSWORD_HASH') } };
      const db = openDb();
      if (o.once) {
        try {
          console.error(`${o.usersFile}: ${(await writeBusUsers(db, o.usersFile, source)) ? 'written' : 'unchanged'}`);
        } finally {
          await db.destroy();
        }
        return;
      }
      const intervalMs = Number(o.intervalMs);
      if (!Number.isInteger(intervalMs) || intervalMs < 100) throw new Error('--interval-ms is a whole number of milliseconds, at least 100.');
      if (!o.pidFile) throw new Error('--pid-file is needed to reload nats-server.');
      const pidFile = o.pidFile;
      const log = (line: string) => console.error(`[bus-credentials sync] ${line}`);
      const sync = startBusUsersSync({ db, file: o.usersFile, source, intervalMs, reload: () => signalNatsServer(pidFile), log });
      await sync.syncNow().catch((error: Error) => log(`first render failed (tried again every ${intervalMs} ms): ${error.message}`));
      log(`watching the database every ${intervalMs} ms`);
      await new Promise<void>((resolve) => {
        for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve());
      });
      await sync.stop();
      await db.destroy();
    });
}
