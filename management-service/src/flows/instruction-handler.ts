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
