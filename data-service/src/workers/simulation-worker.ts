import { parentPort } from 'node:worker_threads';
import { simulate, type Grid, type SimulationInput } from '../simulation/engine.ts';

// A thread of simulation-pool.ts: one simulation per message, the answer's arrays transferred back.
parentPort!.on('message', ({ input, grid }: { input: SimulationInput; grid: Grid }) => {
  try {
    const out = simulate(input, grid);
    parentPort!.postMessage({ out }, [out.values.buffer as ArrayBuffer, out.deposits.buffer as ArrayBuffer]);
  } catch (error) {
    parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
