import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultTimeouts, renderHAProxyConfig, type HAProxyListener, type HAProxyTimeouts } from './haproxy-config.ts';
import { ensureInstalled } from './os-packages.ts';
import { portAnswers, waitFor } from './ports.ts';
import { describeExit, exitOf, isRunning, stopProcess } from './processes.ts';

export type HAProxy = {
  configFile: string;
  /** Writes the listeners' new config and has the master start new workers with it (SIGUSR2). */
  reload: (listeners: HAProxyListener[]) => Promise<void>;
  stop: () => Promise<void>;
};

function writeChecked(haproxy: string, file: string, listeners: HAProxyListener[], timeouts: HAProxyTimeouts): void {
  writeFileSync(file, renderHAProxyConfig(listeners, timeouts));
  try {
    execFileSync(haproxy, ['-c', '-q', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '');
    throw new Error(`HAProxy refuses ${file}: ${stderr.trim()}`, { cause: error });
  }
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
  writeChecked(haproxy, configFile, options.listeners, timeouts);
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
    reload: async (listeners) => {
      writeChecked(haproxy, configFile, listeners, timeouts);
      if (!isRunning(child)) throw new Error('haproxy is not running');
      child.kill('SIGUSR2');
      await listening(listeners);
    },
    stop,
  };
}
