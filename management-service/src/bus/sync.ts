import { readFile, rename, writeFile } from 'node:fs/promises';
import type { Knex } from 'knex';
import { usableBusCredentials } from '../store/bus-credentials.ts';
import { busAccounts, renderNatsAccounts } from './nats-users.ts';

/**
 * Keeps the NATS server's users file equal to the database (docs/adr/0026-bus-authorization.md):
 * renders it, replaces the file only when its text changed, and then has the server reload its
 * configuration, which also closes the connections of users that are gone. A credential revoked in
 * the database stops working within one interval plus the reload.
 */

export type BusUsersSource = {
  /** bcrypt hashes of the services' passwords. */
  services: { management: string; data: string };
  /** bcrypt hash of a user without limits (only `npm start` and the tests have one). */
  admin?: string;
};

/** Writes the users file when it differs; true when it did. Atomic: the server never reads half a file. */
export async function writeBusUsers(db: Knex, file: string, source: BusUsersSource): Promise<boolean> {
  const text = renderNatsAccounts(busAccounts({ ...source, credentials: await usableBusCredentials(db) }));
  const current = await readFile(file, 'utf8').catch(() => undefined);
  if (current === text) return false;
  await writeFile(`${file}.tmp`, text, { mode: 0o600 });
  await rename(`${file}.tmp`, file);
  return true;
}

export type BusUsersSync = {
  /** Renders now (and reloads when it changed); what a test or the CLI calls after a change. */
  syncNow: () => Promise<boolean>;
  stop: () => Promise<void>;
};

export function startBusUsersSync(options: {
  db: Knex;
  file: string;
  source: BusUsersSource;
  intervalMs: number;
  /** Makes the server read its configuration again (SIGHUP to nats-server). */
  reload: () => void | Promise<void>;
  log: (line: string) => void;
}): BusUsersSync {
  let running = true;
  let chain: Promise<boolean> = Promise.resolve(false);
  // One render at a time: a manual syncNow and the timer never interleave their writes.
  const syncNow = () => {
    chain = chain
      .catch(() => false)
      .then(async () => {
        const changed = await writeBusUsers(options.db, options.file, options.source);
        if (changed) {
          await options.reload();
          options.log('bus users changed: NATS server reloaded');
        }
        return changed;
      });
    return chain;
  };
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    timer = setTimeout(() => {
      void syncNow()
        .catch((error: Error) => options.log(`bus users not rendered (tried again in ${options.intervalMs} ms): ${error.message}`))
        .finally(() => running && tick());
    }, options.intervalMs);
  };
  tick();
  return {
    syncNow,
    stop: async () => {
      running = false;
      clearTimeout(timer);
      await chain.catch(() => undefined);
    },
  };
}

/** Reload by signal, the way nats-server 2.9 offers (its pid from the file it writes, `pid_file`). */
export async function signalNatsServer(pidFile: string): Promise<void> {
  const pid = Number((await readFile(pidFile, 'utf8')).trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`${pidFile} holds no process id`);
  process.kill(pid, 'SIGHUP');
}
