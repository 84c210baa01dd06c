import { spawn, type ChildProcess } from 'node:child_process';

export type RunningSupervisor = { child: ChildProcess; output: () => string };

/**
 * Runs `npm start`'s script with `env` (its data folder and ports); resolves once it prints ready.
 * With `npm`, runs `npm start` itself, as the README says, in a process group of its own: `child` is
 * npm's process, the one a process manager signals.
 */
export function startSupervisor(env: NodeJS.ProcessEnv, options: { npm?: boolean } = {}): Promise<RunningSupervisor> {
  const child = options.npm
    ? spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    : spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not get ready:\n${output}`)), 120_000);
    child.stdout!.on('data', () => {
      if (output.includes('[start] ready')) {
        clearTimeout(timer);
        resolve({ child, output: () => output });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}):\n${output}`));
    });
  });
}
