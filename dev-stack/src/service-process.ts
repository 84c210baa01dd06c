// A service in a child process of its own (`node --import tsx <entry>`, or what a launcher given
// runs instead: a container of the image, service-container.ts), as `npm start` and the benchmarks
// run it: started, waited for until ready, stopped, killed and started again on the same port and
// environment, so that clients keep their URLs.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeExit, exitOf, isRunning, stopProcess, type Exit } from './processes.ts';
import { waitReady } from './readiness.ts';
import { SERVICE_NODE_OPTIONS } from './node-options.ts';

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
  /** What runs the service; `node --import tsx <entry>` here by default. */
  launcher?: ServiceLauncher;
  log: (line: string) => void;
};

/** What a launcher is told about the service it runs. */
export type ServiceSpec = Pick<ServiceProcessOptions, 'name' | 'service' | 'port' | 'env' | 'nodeArgs'>;

/** The child process that runs a service (it ends when the service ends), and how to end it. */
export type ServiceLaunch = {
  command: string;
  args: string[];
  /** The child's whole environment. */
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Ends the service at once, as SIGKILL would; by default SIGKILL to the child. */
  kill?: () => void;
  /** Synchronous, run when this process exits so that the service does not outlive it; by default SIGTERM to the child. */
  leave?: () => void;
  /** The container's name, when the service runs in one. */
  container?: string;
};

/** Called at each start (and restart) of a service for the process that runs it. */
export type ServiceLauncher = (spec: ServiceSpec) => ServiceLaunch;

export type ServiceProcess = {
  name: string;
  url: string;
  /** The child process as it runs now (another one after restart()). */
  child: () => ChildProcess;
  /** The name of the container it runs in now, if it runs in one. */
  container: () => string | undefined;
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

/** The default: the service's TypeScript entry point run by Node.js through tsx, with this process's environment. */
export const nodeLauncher: ServiceLauncher = (spec) => ({
  command: process.execPath,
  args: [...SERVICE_NODE_OPTIONS, ...(spec.nodeArgs ?? []), '--import', 'tsx', entries[spec.service]],
  env: { ...process.env, HOST: '127.0.0.1', PORT: String(spec.port), ...spec.env },
  cwd: root,
});

function spawnService(options: ServiceProcessOptions, launch: ServiceLaunch): ChildProcess {
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
  const child = spawn(launch.command, launch.args, {
    cwd: launch.cwd ?? root,
    env: launch.env,
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
  const launcher = options.launcher ?? nodeLauncher;
  let child: ChildProcess;
  let launched: ServiceLaunch;
  let exited: Promise<Exit>;
  // Set while this side ends the process on purpose: no onExit for that.
  let ending = false;
  // Whatever way this process ends (but a signal it does not handle), the service does not outlive it.
  const onExit = () => {
    if (!isRunning(child)) return;
    if (launched.leave) launched.leave();
    else child.kill('SIGTERM');
  };
  const killNow = () => (launched.kill ? launched.kill() : child.kill('SIGKILL'));
  const launch = async () => {
    ending = false;
    process.off('exit', onExit);
    process.on('exit', onExit);
    launched = launcher({ name: options.name, service: options.service, port: options.port, env: options.env, nodeArgs: options.nodeArgs });
    const current = spawnService(options, launched);
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
    await stopProcess(child, { name: options.name, signal: 'SIGTERM', graceMs: options.stopGraceMs ?? 15_000, kill: killNow, log: options.log });
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
    container: () => launched.container,
    exited: () => exited,
    restart: launch,
    stop,
    kill: async () => {
      ending = true;
      killNow();
      await exited;
    },
  };
}
