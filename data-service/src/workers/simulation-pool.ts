import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { simulate, type Grid, type SimulationInput, type SimulationOutput } from '../simulation/engine.ts';

/** Runs simulations off the event loop. */
export type SimulationRunner = {
  run: (input: SimulationInput, grid: Grid) => Promise<SimulationOutput>;
  close: () => Promise<void>;
};

type Task = { input: SimulationInput; grid: Grid; resolve: (out: SimulationOutput) => void; reject: (error: Error) => void };
type Reply = { out?: SimulationOutput; error?: string };

const WORKER = new URL('./simulation-worker.ts', import.meta.url);
/**
 * tsx's ESM module API (`tsx/esm/api` under the `import` condition), found from here: a worker's
 * bare import would resolve from the working directory, and require.resolve finds the CommonJS one.
 */
function tsxApi(): string {
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const exports = (createRequire(import.meta.url)(manifest) as { exports: Record<string, { import: { default: string } }> }).exports;
  return pathToFileURL(join(dirname(manifest), exports['./esm/api']!.import.default)).href;
}

/**
 * A worker thread per simulation at a time, up to `threads` (0: simulate on the caller's event
 * loop). A simulation takes up to seconds of CPU; on the request's event loop it would hold up every
 * other request of the replica, the health checks included. Workers start on first use and stay;
 * inputs and answers are typed arrays (the answer's are transferred, not copied). A worker that
 * fails is replaced.
 */
export function simulationPool(threads: number): SimulationRunner {
  if (threads === 0) return { run: async (input, grid) => simulate(input, grid), close: async () => undefined };
  const idle: Worker[] = [];
  const all = new Set<Worker>();
  const queue: Task[] = [];
  let closed = false;

  const spawn = () => {
    // The service runs TypeScript through tsx, whose loader a worker does not inherit: the worker
    // registers it before importing its module.
    const source = WORKER.pathname.endsWith('.ts')
      ? `import(${JSON.stringify(tsxApi())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER.href)}); })`
      : `import(${JSON.stringify(WORKER.href)})`;
    const worker = new Worker(source, { eval: true });
    worker.unref();
    all.add(worker);
    return worker;
  };

  const assign = (worker: Worker, task: Task) => {
    const done = () => {
      worker.off('message', onMessage);
      worker.off('error', onFailure);
      worker.off('exit', onFailure);
    };
    const onMessage = (reply: Reply) => {
      done();
      if (reply.out) task.resolve(reply.out);
      else task.reject(new Error(`simulation failed: ${reply.error}`));
      if (closed) void worker.terminate();
      else idle.push(worker);
      pump();
    };
    const onFailure = (error: unknown) => {
      done();
      all.delete(worker);
      void worker.terminate();
      task.reject(error instanceof Error ? error : new Error(`simulation worker exited with ${String(error)}`));
      pump();
    };
    worker.on('message', onMessage);
    worker.once('error', onFailure);
    worker.once('exit', onFailure);
    worker.postMessage({ input: task.input, grid: task.grid });
  };

  const pump = () => {
    while (!closed && queue.length > 0 && (idle.length > 0 || all.size < threads)) assign(idle.pop() ?? spawn(), queue.shift()!);
  };

  return {
    run: (input, grid) =>
      new Promise<SimulationOutput>((resolve, reject) => {
        if (closed) return reject(new Error('the simulation pool is closed'));
        queue.push({ input, grid, resolve, reject });
        pump();
      }),
    close: async () => {
      closed = true;
      for (const task of queue.splice(0)) task.reject(new Error('the simulation pool is closed'));
      await Promise.all([...idle.splice(0)].map((w) => w.terminate()));
    },
  };
}
