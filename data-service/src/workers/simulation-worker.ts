import { parentPort } from 'node:worker_threads';
import { UnitRunner } from '../simulation/units.ts';
import type { UnitMessage, UnitReply } from './simulation-pool.ts';

// A thread of simulation-pool.ts: runs the units it is given on the runs' shared arrays, one per
// message, and answers each; keeps a run's setup until told to forget it.
const runs = new Map<number, UnitRunner>();

parentPort!.on('message', (message: UnitMessage) => {
  if ('forget' in message) {
    runs.delete(message.forget);
    return;
  }
  try {
    let runner = runs.get(message.run);
    if (!runner) {
      if (!message.setup) throw new Error(`run ${message.run} was never set up on this thread`);
      const { input, grid, plan, arrays } = message.setup;
      runs.set(message.run, (runner = new UnitRunner(input, grid, plan, arrays)));
    }
    runner.run(message.unit);
    parentPort!.postMessage({ run: message.run } satisfies UnitReply);
  } catch (error) {
    parentPort!.postMessage({ run: message.run, error: error instanceof Error ? error.message : String(error) } satisfies UnitReply);
  }
});
