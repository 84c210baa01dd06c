import type { BrokerInstruction } from '../store/broker-instructions.ts';
import { settleOrders } from './execution-settlement.ts';
import { settleDepositInstruction } from './funding.ts';
import type { InstructionHandler, SettleContext, Settled } from './instruction-handler.ts';
import { settleWithdrawal } from './withdrawals.ts';

type Handlers = { [K in BrokerInstruction['kind']]: InstructionHandler<Extract<BrokerInstruction, { kind: K }>> };

/** Each kind of broker instruction and the flow that settles it (docs/adr/0022-execution-and-withdrawals.md); a new kind adds a line here. */
export const settlementHandlers: Handlers = {
  DEPOSIT: settleDepositInstruction,
  ORDERS: settleOrders,
  WITHDRAWAL: settleWithdrawal,
};

/** Settles a locked instruction with the handler of its kind. */
export function settleInstruction(ctx: SettleContext, instruction: BrokerInstruction, handlers: Handlers = settlementHandlers): Promise<Settled> {
  // The table pairs each kind with its handler; the lookup cannot say so to the type checker.
  const handler = handlers[instruction.kind] as InstructionHandler<BrokerInstruction>;
  return handler(ctx, instruction);
}
