import { parentPort, workerData } from 'node:worker_threads';
import { loadOptimizer } from '../optimizer/engine.ts';
import type { SolveMessage, SolveReply } from './optimizer-pool.ts';
import { setThreadNice } from './thread-priority.ts';

// A thread of optimizer-pool.ts: loads HiGHS (WebAssembly) once and says so, then solves one
// request per message and answers each with its outcome, or the message of what the engine threw.
const settings = workerData as { timeLimitSeconds: number; nice: number };
// Solves are background work: the event loop's requests, and the other processes of the node, go first.
if (settings.nice !== 0) setThreadNice(settings.nice);
const ready = loadOptimizer(settings);
ready.then(
  () => parentPort!.postMessage({ ready: true } satisfies SolveReply),
  (error: unknown) => parentPort!.postMessage({ ready: false, error: error instanceof Error ? error.message : String(error) } satisfies SolveReply),
);

parentPort!.on('message', (message: SolveMessage) => {
  void ready
    .then((optimize) => ({ id: message.id, outcome: optimize(message.request, message.facts) }) satisfies SolveReply)
    .catch((error: unknown) => ({ id: message.id, error: error instanceof Error ? error.message : String(error) }) satisfies SolveReply)
    .then((reply) => parentPort!.postMessage(reply));
});
