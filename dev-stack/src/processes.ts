import type { ChildProcess } from 'node:child_process';

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** Whether the child has not exited yet (a child killed by a signal keeps `exitCode` null). */
export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * Resolves with how the child ended, also when it already had: an `exit` event that fired before
 * the listener was added never fires again, so waiting for it alone can wait for ever.
 */
export function exitOf(child: ChildProcess): Promise<Exit> {
  if (!isRunning(child)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

export function describeExit(exit: Exit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}

function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.then(() => (clearTimeout(timer), resolve(true)));
  });
}

/**
 * Asks the child to stop with `signal`, waits up to `graceMs`, then sends SIGKILL (or calls `kill`,
 * for a child that only relays signals, such as `podman run`) and waits up to `killWaitMs` more;
 * never waits longer than both together. Says so through `log` when it had to kill.
 */
export async function stopProcess(
  child: ChildProcess,
  options: { name: string; signal: NodeJS.Signals; graceMs: number; killWaitMs?: number; kill?: () => void; log: (line: string) => void },
): Promise<void> {
  if (!isRunning(child)) return;
  const exited = exitOf(child);
  child.kill(options.signal);
  if (await settlesWithin(exited, options.graceMs)) return;
  options.log(`${options.name} did not stop within ${options.graceMs} ms of ${options.signal}: killing it`);
  if (options.kill) options.kill();
  else child.kill('SIGKILL');
  const killWaitMs = options.killWaitMs ?? 5_000;
  if (!(await settlesWithin(exited, killWaitMs))) options.log(`${options.name} (pid ${child.pid}) still runs ${killWaitMs} ms after SIGKILL; leaving it`);
}
