// The whole platform as separate processes that a benchmark can kill with SIGKILL and start again:
// embedded Postgres (same data folder and port), nats-server (same port and JetStream folder), the
// management service and the data service (same ports and environment, so clients keep their URLs
// as behind a Kubernetes Service). Everything is started here and stopped by `stop()`, also when
// the start fails half way.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import knex, { type Knex } from 'knex';
import { Resources } from '@platform/shared';
import { startNatsServer, type NatsServer } from '@platform/test-support/nats-server';
import { freePort, waitFor } from '@platform/test-support/ports';
import { startEmbeddedPostgres, type Postgres } from '@platform/test-support/postgres';
import { exitOf, isRunning, stopProcess } from '@platform/test-support/processes';
import { newSecret } from '@platform/test-support/secrets';
import { testSigningKey } from '@platform/test-support/platform';
import { migrateLatest } from '../../management-service/src/store/migrate.ts';
import { cpuSeconds } from './cpu.ts';

export type Component = 'management' | 'data' | 'nats' | 'postgres';

export type Stack = {
  /** Superuser connection to the platform's database (checks and provisioning; row-level security does not apply). */
  db: Knex;
  databaseUrl: string;
  /** NATS with the local admin's credentials (reads every stream). */
  natsUrl: string;
  managementUrl: string;
  dataUrl: string;
  /** Where each component writes its log lines (kept when the caller keeps `workDir`). */
  logDir: string;
  /** CPU seconds used so far by each component's processes as they run now (Postgres: the server and every backend, ended ones too). */
  cpu: () => Record<Component, number>;
  /** SIGKILL: the services' process, nats-server, or the postmaster with every child (a container killed). */
  kill: (component: Component) => Promise<void>;
  /** Starts the component again as before; resolves once it answers. */
  restart: (component: Component) => Promise<void>;
  /** Keeps the work folder (logs, data) when `keep`; stops everything in reverse order of start. */
  stop: (options?: { keep?: boolean }) => Promise<void>;
  workDir: string;
};

export type StackOptions = {
  log: (line: string) => void;
  management?: Record<string, string>;
  data?: Record<string, string>;
};

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The process ids whose parent is `pid` (a Postgres server's backends and auxiliary processes). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4, after the command name in parentheses (which may hold spaces).
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Whether the process exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const { log } = options;
  const resources = new Resources();
  return resources.build(async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'platform-bench-stack-'));
    chmodSync(workDir, 0o755);
    let keep = false;
    resources.add(workDir, (dir) => (keep ? log(`kept ${dir} (logs in ${dir}/logs)`) : rmSync(dir, { recursive: true, force: true })));
    const logDir = join(workDir, 'logs');
    mkdirSync(logDir);
    // Interrupted (Ctrl-C, a time-out), the run still stops what it started; nats-server and
    // Postgres run in process groups of their own and would not get the terminal's signal.
    const children: (() => ChildProcess | undefined)[] = [];
    const onExit = () => {
      for (const child of children.map((c) => c())) if (child && isRunning(child)) child.kill('SIGKILL');
    };
    const onSignal = (signal: NodeJS.Signals) => {
      log(`${signal}: stopping everything`);
      void resources.closeAll().finally(() => process.exit(130));
    };
    process.on('exit', onExit);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    resources.add(null, () => {
      process.off('exit', onExit);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    });

    // Postgres: restarted on the same folder, port and password. fsync is off as in every benchmark
    // here: a killed process loses nothing the kernel holds (an operating system crash would).
    const pgOptions = { dir: join(workDir, 'pg'), port: await freePort(), persistent: false, password: newSecret(), log };
    let postgres: Postgres = await startEmbeddedPostgres(pgOptions);
    resources.add(null, () => postgres.stop());
    const postmasterPid = () => Number(readFileSync(join(pgOptions.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    let postgresPid = postmasterPid();

    const admin = knex({ client: 'pg', connection: postgres.url('postgres'), pool: { min: 0, max: 1 } });
    await admin.raw('create database platform');
    await admin.destroy();
    const databaseUrl = postgres.url('platform');
    const db = resources.add(knex({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 8 } }), (d) => d.destroy());
    await migrateLatest(db);

    const natsOptions = { port: await freePort(), dir: join(workDir, 'nats'), name: 'platform-bench', log };
    let nats: NatsServer = await startNatsServer(natsOptions);
    resources.add(null, () => nats.stop());
    children.push(() => nats.process);

    type Service = { name: string; port: number; env: Record<string, string>; child?: ChildProcess; main: string; readyMs: number };
    const start = async (service: Service) => {
      const out = openSync(join(logDir, `${service.name}.log`), 'a');
      const child = spawn(process.execPath, ['--import', 'tsx', service.main], {
        cwd: root,
        env: { ...process.env, HOST: '127.0.0.1', PORT: String(service.port), METRICS_PORT: '0', LOG_LEVEL: 'warn', ...service.env },
        stdio: ['ignore', out, out],
      });
      closeSync(out);
      service.child = child;
      const url = `http://127.0.0.1:${service.port}`;
      await waitFor(
        service.name,
        async () => {
          if (!isRunning(child)) throw new Error(`exited (${child.exitCode ?? child.signalCode}); see ${logDir}/${service.name}.log`);
          if (!(await fetch(`${url}/readyz`)).ok) throw new Error('not ready');
        },
        service.readyMs,
      );
    };
    const stopService = async (service: Service) => {
      if (service.child) await stopProcess(service.child, { name: service.name, signal: 'SIGTERM', graceMs: 15_000, log });
    };

    const management: Service = {
      name: 'management-service',
      main: 'management-service/src/main.ts',
      port: await freePort(),
      readyMs: 60_000,
      env: {
        DATABASE_URL: databaseUrl,
        NATS_URL: nats.serviceUrls.management,
        JWT_PRIVATE_KEY: await testSigningKey(),
        MIGRATE_ON_START: 'false',
        ...options.management,
      },
    };
    const data: Service = {
      name: 'data-service',
      main: 'data-service/src/main.ts',
      port: await freePort(),
      // The first start generates the sample universe.
      readyMs: 300_000,
      env: {
        DATABASE_URL: databaseUrl,
        NATS_URL: nats.serviceUrls.data,
        DUCKDB_PATH: join(workDir, 'data.duckdb'),
        SAMPLE_DATA: 'true',
        REFERENCE_RELOAD_MS: '0',
        ...options.data,
      },
    };
    children.push(
      () => management.child,
      () => data.child,
    );
    resources.add(management, stopService);
    await start(management);
    log('management service ready');
    resources.add(data, stopService);
    await start(data);
    log('data service ready');

    const killService = async (service: Service) => {
      const child = service.child!;
      const exited = exitOf(child);
      child.kill('SIGKILL');
      await exited;
    };

    const kill = async (component: Component) => {
      if (component === 'management') return killService(management);
      if (component === 'data') return killService(data);
      if (component === 'nats') {
        nats.process.kill('SIGKILL');
        await nats.exited;
        return;
      }
      // The postmaster and every backend at once, as when its container is killed; a backend left
      // behind would hold the shared memory and keep the new server from starting.
      const pids = [postgresPid, ...childrenOf(postgresPid)];
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await postgres.exited;
      await waitFor('the killed Postgres processes to go', async () => {
        if (pids.some(alive)) throw new Error('still there');
      });
    };

    const restart = async (component: Component) => {
      if (component === 'management') return start(management);
      if (component === 'data') return start(data);
      if (component === 'nats') {
        nats = await startNatsServer(natsOptions);
        return;
      }
      postgres = await startEmbeddedPostgres(pgOptions);
      postgresPid = postmasterPid();
    };

    const cpu = (): Record<Component, number> => ({
      management: cpuSeconds(management.child?.pid ? [management.child.pid] : []),
      data: cpuSeconds(data.child?.pid ? [data.child.pid] : []),
      nats: cpuSeconds(nats.process.pid ? [nats.process.pid] : []),
      postgres: cpuSeconds([], pgOptions.dir),
    });

    return {
      db,
      databaseUrl,
      natsUrl: nats.url,
      managementUrl: `http://127.0.0.1:${management.port}`,
      dataUrl: `http://127.0.0.1:${data.port}`,
      logDir,
      workDir,
      cpu,
      kill,
      restart,
      stop: (stopOptions = {}) => {
        keep = stopOptions.keep ?? false;
        return resources.closeAll();
      },
    };
  });
}
