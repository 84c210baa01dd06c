// The whole platform as separate processes that a benchmark can kill with SIGKILL and start again:
// embedded Postgres (same data folder and port), nats-server (same port and JetStream folder), the
// management service and the data service (same ports and environment, so clients keep their URLs
// as behind a Kubernetes Service). Everything is started here and stopped by `stop()`, also when
// the start fails half way.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Knex } from 'knex';
import { Resources } from '@platform/shared';
import { freePort, waitFor } from '@platform/dev-stack/ports';
import { newSecret } from '@platform/dev-stack/secrets';
import { startStack as startDevStack } from '@platform/dev-stack/stack';
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
    const onSignal = (signal: NodeJS.Signals) => {
      log(`${signal}: stopping everything`);
      void resources.closeAll().finally(() => process.exit(130));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    resources.add(null, () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    });

    // Postgres: restarted on the same folder, port and password. fsync is off as in every benchmark
    // here: a killed process loses nothing the kernel holds (an operating system crash would).
    // The services keep their ports and environment when started again.
    const pgDir = join(workDir, 'pg');
    const stack = await startDevStack({
      log,
      resources,
      postgres: { embedded: { dir: pgDir, port: await freePort(), persistent: false, password: newSecret() } },
      database: { name: 'platform' },
      migrate: true,
      poolMax: 8,
      nats: { own: { port: await freePort(), dir: join(workDir, 'nats'), name: 'platform-bench' } },
      services: {
        run: 'process',
        output: { dir: logDir },
        stopGraceMs: 15_000,
        management: { env: { LOG_LEVEL: 'warn', ...options.management } },
        // The first start generates the sample universe.
        data: {
          readyMs: 300_000,
          env: { LOG_LEVEL: 'warn', DUCKDB_PATH: join(workDir, 'data.duckdb'), SAMPLE_DATA: 'true', REFERENCE_RELOAD_MS: '0', ...options.data },
        },
      },
    });
    const postgres = stack.postgres!;
    const nats = stack.nats!;
    const management = stack.processes.management[0]!;
    const data = stack.processes.data!;
    const { db, databaseUrl } = stack;
    const postmasterPid = () => Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    let postgresPid = postmasterPid();

    const kill = async (component: Component) => {
      if (component === 'management') return management.kill();
      if (component === 'data') return data.kill();
      if (component === 'nats') {
        nats.current().process.kill('SIGKILL');
        await nats.current().exited;
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
      await postgres.current().exited;
      await waitFor('the killed Postgres processes to go', async () => {
        if (pids.some(alive)) throw new Error('still there');
      });
    };

    const restart = async (component: Component) => {
      if (component === 'management') return management.restart();
      if (component === 'data') return data.restart();
      if (component === 'nats') return nats.restart();
      await postgres.restart();
      postgresPid = postmasterPid();
    };

    const cpu = (): Record<Component, number> => ({
      management: cpuSeconds([management.child().pid!]),
      data: cpuSeconds([data.child().pid!]),
      nats: cpuSeconds(nats.current().process.pid ? [nats.current().process.pid!] : []),
      postgres: cpuSeconds([], pgDir),
    });

    return {
      db,
      databaseUrl,
      natsUrl: stack.natsUrl,
      managementUrl: management.url,
      dataUrl: data.url,
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
