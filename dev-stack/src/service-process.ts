// A service in a child process of its own (`node --import tsx <entry>`), as `npm start` and the
// benchmarks run it: started, waited for until ready, stopped, killed and started again on the
// same port and environment, so that clients keep their URLs.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeExit, exitOf, isRunning, stopProcess, type Exit } from './processes.ts';
import { waitReady } from './readiness.ts';

export type ServiceName = 'management' | 'data';

/** Where a service's output goes: dropped, its stderr to ours, each line prefixed with its name, or a log file in a folder. */
export type ServiceOutput = 'ignore' | 'stderr' | 'prefixed' | { dir: string };

export type ServiceProcessOptions = {
  /** The name in log lines, prefixes and log files. */
  name: string;
  service: ServiceName;
  port: number;
  /** Added to this process's environment (HOST 127.0.0.1 and PORT come first, `env` may replace them). */
  env: Record<string, string>;
  nodeArgs?: string[];
  output?: ServiceOutput;
  /** How long the service may take to answer /readyz (the data service's first start generates the sample universe). */
  readyMs?: number;
  /** How long it may take to stop on SIGTERM before it is killed. */
  stopGraceMs?: number;
  /**
   * In a process group of its own: a Ctrl-C meant for the caller does not reach it, and the caller
   * stops the services in order (`npm start`). Otherwise the terminal's signal ends it with the caller.
   */
  ownProcessGroup?: boolean;
  /** Called when the process ends on its own (not by stop() or kill()), with how it ended. */
  onExit?: (exit: Exit) => void;
  log: (line: string) => void;
};

export type ServiceProcess = {
  name: string;
  url: string;
  /** The child process as it runs now (another one after restart()). */
  child: () => ChildProcess;
  /** Settles once the current child has exited. */
  exited: () => Promise<Exit>;
  /** Starts the process again as before; resolves once it is ready. */
  restart: () => Promise<void>;
  /** SIGTERM, SIGKILL after the grace period. */
  stop: () => Promise<void>;
  /** SIGKILL, as when a container is killed; resolves once it has exited. */
  kill: () => Promise<void>;
};

// The services' entry points, found through their packages' exports (import.meta.resolve is not
// there when tsx loads this file as CommonJS, under mocha).
const require = createRequire(import.meta.url);
const entries: Record<ServiceName, string> = {
  management: require.resolve('@platform/management-service/main'),
  data: require.resolve('@platform/data-service/main'),
};
// The services read the contracts relative to the repository's root folder.
const root = fileURLToPath(new URL('../..', import.meta.url));

function prefixLines(stream: NodeJS.ReadableStream, out: NodeJS.WritableStream, name: string): void {
  let rest = '';
  stream.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) out.write(`[${name}] ${line}\n`);
  });
}

function spawnService(options: ServiceProcessOptions): ChildProcess {
  const output = options.output ?? 'stderr';
  const logFile = typeof output === 'object' ? openSync(join(output.dir, `${options.name}.log`), 'a') : undefined;
  const stdio =
    logFile !== undefined
      ? (['ignore', logFile, logFile] as const)
      : output === 'prefixed'
        ? (['ignore', 'pipe', 'pipe'] as const)
        : output === 'stderr'
          ? (['ignore', 'ignore', 'inherit'] as const)
          : (['ignore', 'ignore', 'ignore'] as const);
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', entries[options.service]], {
    cwd: root,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(options.port), ...options.env },
    stdio: [...stdio],
    detached: options.ownProcessGroup ?? false,
  });
  if (logFile !== undefined) closeSync(logFile);
  if (output === 'prefixed') {
    prefixLines(child.stdout!, process.stdout, options.name);
    prefixLines(child.stderr!, process.stderr, options.name);
  }
  return child;
}

/** Starts the service and resolves once it answers /readyz; a service that ends before that rejects. */
export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServiceProcess> {
  const url = `http://127.0.0.1:${options.port}`;
  let child: ChildProcess;
  let exited: Promise<Exit>;
  // Set while this side ends the process on purpose: no onExit for that.
  let ending = false;
  // Whatever way this process ends (but a signal it does not handle), the service does not outlive it.
  const onExit = () => void (isRunning(child) && child.kill('SIGTERM'));
  const launch = async () => {
    ending = false;
    process.off('exit', onExit);
    process.on('exit', onExit);
    const current = spawnService(options);
    child = current;
    exited = exitOf(current);
    void exited.then((exit) => {
      if (!ending && child === current) options.onExit?.(exit);
    });
    const where = typeof options.output === 'object' ? `; see ${options.output.dir}/${options.name}.log` : '';
    await waitReady(options.name, url, options.readyMs ?? 60_000, () => {
      if (!isRunning(current)) throw new Error(`exited (${describeExit({ code: current.exitCode, signal: current.signalCode })})${where}`);
    });
  };
  const stop = async () => {
    ending = true;
    process.off('exit', onExit);
    await stopProcess(child, { name: options.name, signal: 'SIGTERM', graceMs: options.stopGraceMs ?? 15_000, log: options.log });
  };
  try {
    await launch();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    name: options.name,
    url,
    child: () => child,
    exited: () => exited,
    restart: launch,
    stop,
    kill: async () => {
      ending = true;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
