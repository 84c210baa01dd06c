import type { Knex } from 'knex';
import type { Logger } from '@platform/shared';
import type { Broker } from '../broker/broker.ts';
import type { BrokerInstruction } from '../store/broker-instructions.ts';
import type { TenantSettings } from '../store/tenant-scope.ts';

/** The configured broker (REAL_MONEY, SERVICE integration) and the built-in simulated one that PAPER_MONEY portfolios always use. */
export type Brokers = { configured: Broker; paper: Broker };

/** What a handler gets: the settlement's tenant transaction, in which the instruction is locked. */
export type SettleContext = { trx: Knex.Transaction; tenant: TenantSettings; brokers: Brokers; now: string; logger: Logger };

/** What became of an instruction: `outcome` for the log, `detail` why nothing was booked (or null), `result` the broker's answer. */
export type Settled = { outcome: string; detail: string | null; result: unknown };

/**
 * Settles one kind of instruction: sends it to the broker and books the answer in the context's transaction. A thrown
 * error rolls everything back and the settlement job sends the instruction again later (the broker executes an id once).
 */
export type InstructionHandler<I extends BrokerInstruction> = (ctx: SettleContext, instruction: I) => Promise<Settled>;

/**
 * What becomes of an instruction before it is first handed to the broker: `send` it as it is now (a payout resized to
 * what may go), or `settled` without sending (nothing is due any more, or the cash it needs is not there).
 */
export type Prepared<I extends BrokerInstruction> = { send: I } | { settled: Settled };

/**
 * Decides, in its own tenant transaction committed before the broker is called, how an instruction is first sent
 * (docs/adr/0022-execution-and-withdrawals.md). Never called again once the instruction is sent: the broker may have
 * executed it, so a retry sends it unchanged.
 */
export type InstructionPreparer<I extends BrokerInstruction> = (ctx: SettleContext, instruction: I) => Promise<Prepared<I>>;
