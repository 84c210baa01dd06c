import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { simulate, type Grid, type SimulationInput, type SimulationOutput } from '../simulation/engine.ts';

/** A simulation handed to a thread: its answer, and a way to stop it. */
export type SimulationRun = {
  done: Promise<SimulationOutput>;
  /** Stops the run and rejects `done` with `reason`; nothing once `done` settled. */
  cancel: (reason: unknown) => void;
};

/** Runs simulations off the event loop, `slots` at a time. */
export type SimulationExecutor = {
  slots: number;
  start: (input: SimulationInput, grid: Grid) => SimulationRun;
  close: () => Promise<void>;
};

type Task = {
  input: SimulationInput;
  grid: Grid;
  resolve: (out: SimulationOutput) => void;
  reject: (error: unknown) => void;
  settled: boolean;
  /** While on a thread: the thread, and what takes the task's listeners off it. */
  worker?: Worker;
  detach?: () => void;
};
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
 * loop, one at a time). A simulation takes up to seconds of CPU; on the request's event loop it
 * would hold up every other request of the replica, the health checks included. Workers start on
 * first use and stay; inputs and answers are typed arrays (the answer's are transferred, not
 * copied). A worker that fails is replaced. Cancelling a running simulation terminates its thread,
 * which stops the CPU at once wherever the engine is (a flag the engine polls would miss the
 * quantile and answer work between steps); the next run starts a new thread.
 */
export function simulationPool(threads: number): SimulationExecutor {
  if (threads === 0) return eventLoopExecutor();
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

  const settle = (task: Task) => {
    task.settled = true;
    task.detach?.();
    task.worker = task.detach = undefined;
  };

  const assign = (worker: Worker, task: Task) => {
    const onMessage = (reply: Reply) => {
      settle(task);
      if (reply.out) task.resolve(reply.out);
      else task.reject(new Error(`simulation failed: ${reply.error}`));
      if (closed) void worker.terminate();
      else idle.push(worker);
      pump();
    };
    const onFailure = (error: unknown) => {
      settle(task);
      all.delete(worker);
      void worker.terminate();
      task.reject(error instanceof Error ? error : new Error(`simulation worker exited with ${String(error)}`));
      pump();
    };
    worker.on('message', onMessage);
    worker.once('error', onFailure);
    worker.once('exit', onFailure);
    task.worker = worker;
    task.detach = () => {
      worker.off('message', onMessage);
      worker.off('error', onFailure);
      worker.off('exit', onFailure);
    };
    worker.postMessage({ input: task.input, grid: task.grid });
  };

  const pump = () => {
    while (!closed && queue.length > 0 && (idle.length > 0 || all.size < threads)) assign(idle.pop() ?? spawn(), queue.shift()!);
  };

  const cancel = (task: Task, reason: unknown) => {
    if (task.settled) return;
    const worker = task.worker;
    settle(task);
    if (worker) {
      all.delete(worker);
      void worker.terminate();
    } else {
      queue.splice(queue.indexOf(task), 1);
    }
    task.reject(reason);
    pump();
  };

  return {
    slots: threads,
    start: (input, grid) => {
      let task!: Task;
      const done = new Promise<SimulationOutput>((resolve, reject) => {
        task = { input, grid, resolve, reject, settled: false };
      });
      if (closed) {
        task.settled = true;
        task.reject(new Error('the simulation pool is closed'));
      } else {
        queue.push(task);
        pump();
      }
      return { done, cancel: (reason) => cancel(task, reason) };
    },
    close: async () => {
      closed = true;
      for (const task of queue.splice(0)) {
        task.settled = true;
        task.reject(new Error('the simulation pool is closed'));
      }
      await Promise.all([...idle.splice(0)].map((w) => w.terminate()));
    },
  };
}

/**
 * SIMULATION_THREADS=0: the simulation runs on the event loop in one piece, so a run that started
 * cannot be stopped; one not yet started (it starts on the next turn of the loop) can.
 */
function eventLoopExecutor(): SimulationExecutor {
  return {
    slots: 1,
    start: (input, grid) => {
      let settled = false;
      let reject!: (error: unknown) => void;
      const done = new Promise<SimulationOutput>((resolve, rejectDone) => {
        reject = rejectDone;
        setImmediate(() => {
          if (settled) return;
          settled = true;
          try {
            resolve(simulate(input, grid));
          } catch (error) {
            rejectDone(error);
          }
        });
      });
      return {
        done,
        cancel: (reason) => {
          if (settled) return;
          settled = true;
          reject(reason);
        },
      };
    },
    close: async () => undefined,
  };
}
