import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startHAProxy, type HAProxy } from './haproxy.ts';
import { postgresPrimaryListener } from './haproxy-config.ts';
import { ensureInstalled } from './os-packages.ts';
import { etcdArgs, patroniConfig, SUPERUSER, type PatroniCluster, type PatroniNodeSpec } from './patroni-config.ts';
import { freePort, portAnswers, waitFor } from './ports.ts';
import { postgresSystemUser } from './postgres.ts';
import { exitOf, isRunning, stopProcess } from './processes.ts';
import { newSecret } from './secrets.ts';

export const PG15_BIN = '/usr/lib/postgresql/15/bin';

export type PatroniNode = {
  name: string;
  /** Patroni's REST API, `http://127.0.0.1:<port>`. */
  restApi: string;
  /** This node's Postgres directly, not through HAProxy. */
  url: (database?: string) => string;
  /** SIGKILL to Patroni and to Postgres with its backends: a machine that dies. */
  kill: () => Promise<void>;
  /** Patroni's orderly stop, which stops its Postgres too. */
  stop: () => Promise<void>;
  /** SIGSTOP, SIGCONT to Patroni and Postgres together: a machine that stalls, then wakes. */
  sigstop: () => void;
  sigcont: () => void;
  /** Starts Patroni again on the same data: it rejoins as whatever the cluster lets it be. */
  restart: () => void;
};

export type PatroniStack = {
  /** The superuser through HAProxy: always the current primary. */
  databaseUrl: string;
  nodes: PatroniNode[];
  /** The name of the node whose Patroni answers /primary with 200, waiting until one does. */
  primary: (timeoutMs?: number) => Promise<string>;
  /**
   * Waits until a standby streams synchronously from the primary and Patroni has it as the
   * synchronous standby too (only that node may be promoted); resolves with its name.
   */
  synchronousStandby: (timeoutMs?: number) => Promise<string>;
  stop: () => Promise<void>;
};

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* gone already */
  }
}

/** A process's name and parent from /proc/<pid>/stat ("pid (comm) state ppid ..."; comm may hold spaces). */
function procStat(pid: number): { comm: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    return { comm: stat.slice(stat.indexOf('(') + 1, close), ppid: Number(stat.slice(close + 2).split(' ')[1]) };
  } catch {
    return undefined;
  }
}

/**
 * The postmaster running on `dataDir` and its children. Each Postgres child is a session of its
 * own, and Patroni starts the postmaster from a launcher in yet another, so no process group holds
 * them all: a machine that stalls is imitated by signalling each.
 */
function postgresProcesses(dataDir: string): number[] {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return [];
  }
  if (!Number.isInteger(postmaster) || postmaster <= 1 || procStat(postmaster)?.comm !== 'postgres') return [];
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => procStat(pid)?.ppid === postmaster);
  return [postmaster, ...children];
}

function signalEach(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      /* gone already */
    }
  }
}

async function restRole(restApi: string): Promise<number> {
  try {
    const response = await fetch(`${restApi}/primary`, { signal: AbortSignal.timeout(1_000) });
    await response.body?.cancel();
    return response.status;
  } catch {
    return 0;
  }
}

type ClusterView = { members: { name: string; role: string; state: string }[] };

/** Patroni's view of the cluster from the first node that answers. */
async function clusterView(restApis: string[]): Promise<ClusterView> {
  for (const api of restApis) {
    try {
      const response = await fetch(`${api}/cluster`, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return (await response.json()) as ClusterView;
    } catch {
      /* the next node may answer */
    }
  }
  throw new Error('no Patroni REST API answers');
}

/** The names of the standbys streaming synchronously from the primary behind `url`. */
async function syncStandbysStreaming(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000, query_timeout: 5_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string }>(
      `select application_name as name from pg_stat_replication where state = 'streaming' and sync_state = 'sync' and not pg_is_in_recovery()`,
    );
    return rows.map((r) => r.name);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Starts Postgres 15 with automatic failover on loopback: a single-member etcd, two Patroni nodes
 * (run as the postgres OS user, their data under `dir`) in synchronous mode, and HAProxy sending
 * connections to whichever node Patroni calls the primary (docs/adr/0050-postgres-failover.md).
 * Resolves once a primary has a standby streaming synchronously that Patroni names as such.
 */
export async function startPatroni(options: { dir: string; log: (line: string) => void; ttl?: number; scope?: string }): Promise<PatroniStack> {
  const { dir, log } = options;
  const ttl = options.ttl ?? 10;
  if (!Number.isInteger(ttl) || ttl < 5) throw new Error(`the leader key's ttl must be a whole number of seconds, at least 5 (got ${ttl})`);
  const etcd = ensureInstalled('etcd', 'etcd-server', log, 'to run Postgres with failover');
  const patroni = ensureInstalled('patroni', 'patroni', log, 'to run Postgres with failover');
  ensureInstalled(`${PG15_BIN}/postgres`, 'postgresql-15', log, 'to run Postgres with failover');
  const user = postgresSystemUser() ?? { uid: process.getuid!(), gid: process.getgid!() };
  const asPostgres = { uid: user.uid, gid: user.gid };
  mkdirSync(dir, { recursive: true });
  chownSync(dir, user.uid, user.gid);
  const owned = (path: string) => (mkdirSync(path, { recursive: true, mode: 0o700 }), chownSync(path, user.uid, user.gid), path);
  const logFile = (name: string) => {
    const fd = openSync(join(dir, `${name}.log`), 'a');
    chownSync(join(dir, `${name}.log`), user.uid, user.gid);
    return fd;
  };
  const children: ChildProcess[] = [];
  const spawnLogged = (name: string, command: string, args: string[]) => {
    const fd = logFile(name);
    const child = spawn(command, args, {
      ...asPostgres,
      cwd: dir,
      env: { PATH: process.env.PATH, HOME: dir, LC_ALL: 'C.UTF-8' },
      stdio: ['ignore', fd, fd],
      detached: true,
    });
    closeSync(fd);
    children.push(child);
    return child;
  };

  const [etcdClientPort, etcdPeerPort, proxyPort] = [await freePort(), await freePort(), await freePort()];
  const etcdProcess = spawnLogged(
    'etcd',
    etcd,
    etcdArgs({ name: 'etcd0', clientPort: etcdClientPort, peerPort: etcdPeerPort, dataDir: owned(join(dir, 'etcd')) }),
  );
  const cluster: PatroniCluster = {
    scope: options.scope ?? 'platform',
    etcdClientPort,
    binDir: PG15_BIN,
    superuserPassword: newSecret(),
    replicationPassword: newSecret(),
    ttl,
    loopWait: 1,
    // Patroni wants ttl ≥ loop_wait + 2 × retry_timeout.
    retryTimeout: Math.max(2, Math.floor((ttl - 1) / 2)),
  };
  const processes = new Map<string, ChildProcess>();
  const specs: PatroniNodeSpec[] = [];
  let proxy: HAProxy | undefined;
  // A caller that exits without stop() (a crash, an interrupted test run) would otherwise leave
  // etcd, Patroni and Postgres running on their ports; 'exit' handlers may only act synchronously.
  const killOnExit = () => {
    for (const child of children) if (isRunning(child)) signalGroup(child.pid, 'SIGKILL');
    for (const spec of specs) signalEach(postgresProcesses(spec.dataDir), 'SIGKILL');
  };
  process.once('exit', killOnExit);
  const stopAll = async () => {
    process.removeListener('exit', killOnExit);
    await proxy?.stop();
    for (const child of [...processes.values()]) await stopProcess(child, { name: 'patroni', signal: 'SIGTERM', graceMs: 30_000, log });
    await stopProcess(etcdProcess, { name: 'etcd', signal: 'SIGTERM', graceMs: 10_000, log });
    for (const child of children) if (isRunning(child)) child.kill('SIGKILL');
    // A Postgres whose Patroni was killed outlives it (it runs in a session of its own).
    for (const spec of specs) {
      signalEach(postgresProcesses(spec.dataDir), 'SIGKILL');
    }
  };

  try {
    await waitFor('etcd', async () => {
      if (!isRunning(etcdProcess)) throw new Error(`etcd exited; see ${join(dir, 'etcd.log')}`);
      if (!(await portAnswers(etcdClientPort))) throw new Error('not listening');
    });
    for (const name of ['pg0', 'pg1']) {
      const home = owned(join(dir, name));
      specs.push({ name, pgPort: await freePort(), restPort: await freePort(), dataDir: join(home, 'data'), socketDir: home, pgpass: join(home, 'pgpass') });
    }
    const configFiles = specs.map((spec) => {
      const file = join(dir, `${spec.name}.yml`);
      writeFileSync(file, JSON.stringify(patroniConfig(cluster, spec), null, 2), { mode: 0o600 });
      chownSync(file, user.uid, user.gid);
      return file;
    });
    const launch = (i: number) => processes.set(specs[i]!.name, spawnLogged(specs[i]!.name, patroni, [configFiles[i]!]));
    // The first node initialises the cluster alone; the second then copies it as a standby.
    launch(0);
    const nodes: PatroniNode[] = specs.map((spec, i) => {
      const patroniPid = () => processes.get(spec.name)?.pid;
      const signalBoth = (signal: NodeJS.Signals) => {
        signalEach(postgresProcesses(spec.dataDir), signal);
        signalGroup(patroniPid(), signal);
      };
      return {
        name: spec.name,
        restApi: `http://127.0.0.1:${spec.restPort}`,
        url: (database = 'postgres') => `postgres://${SUPERUSER}:${cluster.superuserPassword}@127.0.0.1:${spec.pgPort}/${database}`,
        kill: async () => {
          const child = processes.get(spec.name);
          signalBoth('SIGKILL');
          if (child) await exitOf(child);
        },
        stop: async () => {
          const child = processes.get(spec.name);
          if (child) await stopProcess(child, { name: `patroni ${spec.name}`, signal: 'SIGTERM', graceMs: 30_000, log });
        },
        sigstop: () => signalBoth('SIGSTOP'),
        sigcont: () => signalBoth('SIGCONT'),
        restart: () => {
          const child = processes.get(spec.name);
          if (child && isRunning(child)) throw new Error(`patroni ${spec.name} is still running`);
          launch(i);
        },
      };
    });

    const primary = async (timeoutMs = 60_000) => {
      let name: string | undefined;
      await waitFor(
        'a Patroni primary',
        async () => {
          for (const node of nodes) if ((await restRole(node.restApi)) === 200) return void (name = node.name);
          throw new Error('no node answers /primary with 200');
        },
        timeoutMs,
      );
      return name!;
    };
    await primary(120_000);
    launch(1);
    proxy = await startHAProxy({
      dir: owned(join(dir, 'haproxy')),
      listeners: [
        postgresPrimaryListener({ port: proxyPort, nodes: specs.map((s) => ({ name: s.name, host: '127.0.0.1', port: s.pgPort, restPort: s.restPort })) }),
      ],
      log,
    });
    const databaseUrl = `postgres://${SUPERUSER}:${cluster.superuserPassword}@127.0.0.1:${proxyPort}/postgres`;
    const synchronousStandby = async (timeoutMs = 120_000) => {
      let name: string | undefined;
      await waitFor(
        'a synchronous standby streaming from the primary, known to Patroni as such',
        async () => {
          const streaming = await syncStandbysStreaming(databaseUrl);
          const view = await clusterView(nodes.map((n) => n.restApi));
          const sync = view.members.find((m) => m.role === 'sync_standby' && m.state === 'running' && streaming.includes(m.name));
          if (!sync) throw new Error(`streaming synchronously: [${streaming.join(', ')}]; Patroni: ${JSON.stringify(view.members)}`);
          name = sync.name;
        },
        timeoutMs,
      );
      return name!;
    };
    await synchronousStandby(180_000);
    let stopped = false;
    return {
      databaseUrl,
      nodes,
      primary,
      synchronousStandby,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        for (const node of nodes) node.sigcont();
        await stopAll();
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
