// What the consumer of optimizer requests needs of the threads that solve them (workers/), and how a solve may end without an outcome.
import type { InstrumentFacts, OptimizerRequest, Outcome } from './engine.ts';

type Facts = ReadonlyMap<string, InstrumentFacts>;

/** The engine threw on a request, or its thread failed while solving it: answered as a FAILURE, as on the event loop before. */
export class EngineFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EngineFailed';
  }
}

/** Not solved because the service is stopping: the request is to be offered again, not answered. */
export class OptimizerClosed extends Error {
  constructor() {
    super('the optimizer is closed');
    this.name = 'OptimizerClosed';
  }
}

/** Requests solving on the threads and waiting for one, over all tenants. */
export type OptimizerStats = { running: number; waiting: number };

export type OptimizerScheduler = {
  /**
   * The outcome, and the seconds its solve took on a thread. Rejects with OptimizerClosed when the
   * service stops first, with EngineFailed, or with the error of reading the facts.
   */
  solve: (tenant: string, request: OptimizerRequest, facts: () => Promise<Facts>) => Promise<{ outcome: Outcome; seconds: number }>;
  stats: () => OptimizerStats;
  /** Requests of one tenant waiting for a thread. */
  waiting: (tenant: string) => number;
  /** Hands back (OptimizerClosed) every request waiting or solving, and stops the threads. */
  close: () => Promise<void>;
};
