/**
 * Ctrl-C, SIGINT and SIGTERM of the supervisors (`npm start`, `npm run topology`). Their children
 * run in process groups of their own, so a signal reaches only the supervisor, which stops them in
 * order. A second signal does not wait for that: the dev stack's exit handlers signal what still
 * runs. npm passes SIGINT and SIGTERM on to the script (it execs node, so no shell sits between them
 * to keep the signal), and Ctrl-C reaches the script from the terminal as well: one keypress arrives
 * twice. A signal within `sameSignalMs` of the first is that one.
 */

export const SAME_SIGNAL_MS = 1000;

/** What a signal at `now` asks for, given when the first one came: stop in order, exit at once, or nothing (the first one again). */
export function stopSignalAction(firstAt: number | undefined, now: number, sameSignalMs = SAME_SIGNAL_MS): 'stop' | 'exit' | 'same' {
  if (firstAt === undefined) return 'stop';
  return now - firstAt > sameSignalMs ? 'exit' : 'same';
}

/** Where the signals come from: the process, or an emitter standing in for it. */
type SignalSource = {
  on: (signal: 'SIGINT' | 'SIGTERM', listener: () => void) => unknown;
  removeListener: (signal: 'SIGINT' | 'SIGTERM', listener: () => void) => unknown;
};

/**
 * Calls `stop` on the first SIGINT or SIGTERM and `exit` on a later one (past `sameSignalMs`).
 * Returns the function that removes the handlers.
 */
export function onStopSignals(handlers: { stop: () => void; exit: () => void; now?: () => number; sameSignalMs?: number; source?: SignalSource }): () => void {
  const now = handlers.now ?? Date.now;
  const source = handlers.source ?? process;
  let firstAt: number | undefined;
  const onSignal = () => {
    const at = now();
    const action = stopSignalAction(firstAt, at, handlers.sameSignalMs);
    if (action === 'stop') {
      firstAt = at;
      handlers.stop();
    } else if (action === 'exit') handlers.exit();
  };
  source.on('SIGINT', onSignal);
  source.on('SIGTERM', onSignal);
  return () => {
    source.removeListener('SIGINT', onSignal);
    source.removeListener('SIGTERM', onSignal);
  };
}
