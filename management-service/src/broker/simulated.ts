import type { Broker, CashMove, CashMoveResult } from './broker.ts';

/**
 * The built-in broker: every cash move settles after `latencyMs`, with a reference derived from the
 * instruction id (so a repeated move answers the same).
 */
export function simulatedBroker(latencyMs: number): Broker {
  return {
    moveCash: async (move: CashMove): Promise<CashMoveResult> => {
      if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
      return { status: 'SETTLED', reference: `SIM-${move.id}` };
    },
  };
}
