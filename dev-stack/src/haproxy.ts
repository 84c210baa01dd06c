import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { defaultTimeouts, renderHAProxyConfig, type HAProxyListener, type HAProxyTimeouts } from './haproxy-config.ts';
import { ensureInstalled } from './os-packages.ts';
import { portAnswers, waitFor } from './ports.ts';
import { describeExit, exitOf, isRunning, stopProcess } from './processes.ts';

/** One server's counters from the runtime API's `show stat` (since HAProxy started). */
export type HAProxyServerStats = {
  listener: string;
  server: string;
  /** UP, DOWN, MAINT, DRAIN, or UP/DOWN n/m while a check changes its mind. */
  status: string;
  /** Requests sent to this server again after a failure (`wretr`), and sent on to another server (`wredis`). */
  retries: number;
  redispatches: number;
  /** Answers by class, and connections that failed (`econ`) or answers that broke off (`eresp`). */
  responses5xx: number;
  connectionErrors: number;
  responseErrors: number;
  /** Sessions since start (`stot`). */
  sessions: number;
};

export type HAProxy = {
  configFile: string;
  /** The runtime API's Unix socket (counters, a server's state). */
  runtimeSocket: string;
  /** Every server's counters, read from the runtime API. */
  serverStats: () => Promise<HAProxyServerStats[]>;
  /** Sets a server's state at run time: `maint` takes it out of rotation at once, `ready` puts it back. */
  setServerState: (listener: string, server: string, state: 'ready' | 'drain' | 'maint') => Promise<void>;
  /** Writes the listeners' new config and has the master start new workers with it (SIGUSR2). */
  reload: (listeners: HAProxyListener[]) => Promise<void>;
  stop: () => Promise<void>;
};

function writeChecked(haproxy: string, file: string, listeners: HAProxyListener[], timeouts: HAProxyTimeouts, socket: string): void {
  writeFileSync(file, renderHAProxyConfig(listeners, timeouts, socket));
  try {
    execFileSync(haproxy, ['-c', '-q', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '');
    throw new Error(`HAProxy refuses ${file}: ${stderr.trim()}`, { cause: error });
  }
}

/** Sends one command to the runtime API and resolves with its whole answer. */
function runtimeCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const connection = createConnection({ path: socket });
    let answer = '';
    connection.setTimeout(5_000, () => connection.destroy(new Error(`HAProxy's runtime API did not answer ${command}`)));
    connection.on('connect', () => connection.end(`${command}\n`));
    connection.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    connection.on('error', reject);
    connection.on('close', () => resolve(answer));
  });
}

/** `show stat`'s CSV (a header line `# pxname,svname,...`), servers only (not FRONTEND/BACKEND rows). */
function parseServerStats(csv: string): HAProxyServerStats[] {
  const [header, ...rows] = csv.trim().split('\n');
  if (!header?.startsWith('# ')) throw new Error(`HAProxy's show stat gave no header: ${csv.slice(0, 200)}`);
  const columns = header.slice(2).split(',');
  const at = (row: string[], name: string) => row[columns.indexOf(name)] ?? '';
  const count = (row: string[], name: string) => Number(at(row, name) || 0);
  return rows
    .map((line) => line.split(','))
    .filter((row) => !['FRONTEND', 'BACKEND'].includes(at(row, 'svname')))
    .map((row) => ({
      listener: at(row, 'pxname'),
      server: at(row, 'svname'),
      status: at(row, 'status'),
      retries: count(row, 'wretr'),
      redispatches: count(row, 'wredis'),
      responses5xx: count(row, 'hrsp_5xx'),
      connectionErrors: count(row, 'econ'),
      responseErrors: count(row, 'eresp'),
      sessions: count(row, 'stot'),
    }));
}

async function listening(listeners: HAProxyListener[]): Promise<void> {
  for (const l of listeners) {
    await waitFor(`haproxy listener ${l.name} on ${l.port}`, async () => {
      if (!(await portAnswers(l.port))) throw new Error('not listening');
    });
  }
}

/**
 * Starts HAProxy (Debian's package, installed when missing) in master-worker mode in the
 * foreground, its config in `dir`, and waits until every listener accepts connections. A listener
 * accepts even while all its servers are down: a client then gets its connection closed.
 */
export async function startHAProxy(options: {
  dir: string;
  listeners: HAProxyListener[];
  timeouts?: HAProxyTimeouts;
  log: (line: string) => void;
}): Promise<HAProxy> {
  const haproxy = ensureInstalled('haproxy', 'haproxy', options.log, 'to put HAProxy in front of replicas');
  const timeouts = options.timeouts ?? defaultTimeouts;
  mkdirSync(options.dir, { recursive: true });
  const configFile = join(options.dir, 'haproxy.cfg');
  const runtimeSocket = join(options.dir, 'admin.sock');
  writeChecked(haproxy, configFile, options.listeners, timeouts, runtimeSocket);
  // Waiting for the ports would otherwise take another program that holds one for HAProxy.
  for (const l of options.listeners) if (await portAnswers(l.port)) throw new Error(`port ${l.port} of listener ${l.name} is taken`);
  const child = spawn(haproxy, ['-Ws', '-f', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
  const exited = exitOf(child);
  // A caller that exits without stop() would otherwise leave HAProxy holding its ports.
  const killOnExit = () => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = () => {
    process.removeListener('exit', killOnExit);
    return stopProcess(child, { name: 'haproxy', signal: 'SIGTERM', graceMs: 5_000, log: options.log });
  };
  const ready = listening(options.listeners).then(() => 'ready' as const);
  // Still polling when HAProxy exits first: its failure then is no one's to handle.
  ready.catch(() => undefined);
  let first: Awaited<typeof exited> | 'ready';
  try {
    first = await Promise.race([ready, exited]);
  } catch (error) {
    await stop();
    throw error;
  }
  if (first !== 'ready') {
    process.removeListener('exit', killOnExit);
    throw new Error(`haproxy exited (${describeExit(first)}) before listening: ${stderr.trim()}`);
  }
  return {
    configFile,
    runtimeSocket,
    serverStats: async () => parseServerStats(await runtimeCommand(runtimeSocket, 'show stat')),
    setServerState: async (listener, server, state) => {
      const answer = (await runtimeCommand(runtimeSocket, `set server ${listener}/${server} state ${state}`)).trim();
      if (answer !== '') throw new Error(`HAProxy refused to set ${listener}/${server} ${state}: ${answer}`);
    },
    reload: async (listeners) => {
      writeChecked(haproxy, configFile, listeners, timeouts, runtimeSocket);
      if (!isRunning(child)) throw new Error('haproxy is not running');
      child.kill('SIGUSR2');
      await listening(listeners);
    },
    stop,
  };
}
