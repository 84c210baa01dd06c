import type { Broker, CashMove, CashMoveResult, OrderRequest, OrdersResult } from './broker.ts';

export type SimulatedBrokerOptions = {
  /** Time each call takes. */
  latencyMs?: number;
  /** Share of instructions (0–1) the broker refuses: REJECTED, nothing executed. */
  refuseRate?: number;
  /** Share of calls (0–1) that fail transiently: the call throws, before or after executing (then the answer is lost). */
  failureRate?: number;
  /** The source of chance, [0, 1); tests pass a seeded one. */
  random?: () => number;
  /** How many executed ids it remembers to answer repeats the same (oldest forgotten first). */
  memory?: number;
};

/** A transient failure of the simulated broker: nothing is booked, the settlement job sends the instruction again. */
export class SimulatedBrokerFailure extends Error {}

/**
 * The built-in broker: it fills every order at the given price, in the order's currency, and settles every cash move, unless told to refuse or
 * fail a share of them. It executes each instruction id once: a repeated id answers the first result (the failure
 * after execution loses only the answer, as a network would).
 */
export function simulatedBroker(options: SimulatedBrokerOptions = {}): Broker {
  const { latencyMs = 0, refuseRate = 0, failureRate = 0, random = Math.random, memory = 100_000 } = options;
  const executed = new Map<string, CashMoveResult | OrdersResult>();

  async function execute<T extends CashMoveResult | OrdersResult>(id: string, run: () => T): Promise<T> {
    if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
    const failure = random() < failureRate;
    if (failure && random() < 0.5) throw new SimulatedBrokerFailure(`simulated broker unavailable before executing ${id}`);
    let result = executed.get(id) as T | undefined;
    if (!result) {
      result = run();
      executed.set(id, result);
      if (executed.size > memory) executed.delete(executed.keys().next().value!);
    }
    if (failure) throw new SimulatedBrokerFailure(`simulated broker executed ${id} but its answer was lost`);
    return result;
  }
  const refused = () => random() < refuseRate;

  return {
    moveCash: (move: CashMove) =>
      execute<CashMoveResult>(move.id, () =>
        refused() ? { status: 'REJECTED', reason: 'simulated refusal of the cash move' } : { status: 'SETTLED', reference: `SIM-${move.id}` },
      ),
    placeOrders: (request: OrderRequest) =>
      execute<OrdersResult>(request.id, () =>
        refused()
          ? { status: 'REJECTED', reason: 'simulated refusal of the orders' }
          : {
              status: 'FILLED',
              fills: request.orders.map((o) => ({
                isin: o.isin,
                shares: o.shares,
                price: o.price,
                currency: o.currency,
                reference: `SIM-${request.id}-${o.isin}`,
              })),
            },
      ),
  };
}
