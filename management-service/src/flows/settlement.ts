import type { BrokerInstruction, DepositInstruction } from '../store/broker-instructions.ts';
import { prepareOrders, settleOrders } from './execution-settlement.ts';
import { settleDepositInstruction } from './funding.ts';
import type { InstructionHandler, InstructionPreparer, Prepared, SettleContext, Settled } from './instruction-handler.ts';
import { preparePayout, settleWithdrawal } from './withdrawals.ts';

type Handlers = { [K in BrokerInstruction['kind']]: InstructionHandler<Extract<BrokerInstruction, { kind: K }>> };
type Preparers = { [K in BrokerInstruction['kind']]: InstructionPreparer<Extract<BrokerInstruction, { kind: K }>> };

/** A deposit brings cash: it goes as it was queued. */
const asQueued: InstructionPreparer<DepositInstruction> = async (_ctx, instruction) => ({ send: instruction });

/** How each kind is first sent: orders only when the cash they need is there, a payout no larger than may go now. */
export const sendPreparers: Preparers = {
  DEPOSIT: asQueued,
  ORDERS: prepareOrders,
  WITHDRAWAL: preparePayout,
};

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

/** Prepares a locked instruction not sent yet with the preparer of its kind. */
export function prepareInstruction(
  ctx: SettleContext,
  instruction: BrokerInstruction,
  preparers: Preparers = sendPreparers,
): Promise<Prepared<BrokerInstruction>> {
  // As above: the table pairs each kind with its preparer.
  const prepare = preparers[instruction.kind] as InstructionPreparer<BrokerInstruction>;
  return prepare(ctx, instruction);
}
