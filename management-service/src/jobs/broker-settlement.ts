import type { Knex } from 'knex';
import type { Logger } from '@platform/shared';
import type { Broker } from '../broker/broker.ts';
import { simulatedBroker } from '../broker/simulated.ts';
import { settleInstruction } from '../flows/settlement.ts';
import { dueInstructions, lockInstruction, markSettled, postpone } from '../store/broker-instructions.ts';
import { inTenant } from '../store/tenant-scope.ts';
import { startNotifiedLoop } from './notified-loop.ts';

export type SettlementOptions = {
  db: Knex;
  databaseUrl: string;
  /** The broker of REAL_MONEY portfolios of tenants with SERVICE integration. */
  broker: Broker;
  /** The broker of PAPER_MONEY portfolios; default: the built-in simulated broker. */
  paperBroker?: Broker;
  logger: Logger;
  batch?: number;
  pollMs?: number;
  /** Delay before a failed instruction is sent again. */
  retryMs?: number;
};

/**
 * Executes the broker instructions (deposits, withdrawals, orders) and books their results. Each instruction is
 * locked, sent to the broker and settled in one tenant transaction, by the handler of its kind
 * (flows/settlement.ts), so replicas never settle one twice; a crash or error before commit sends it again (the
 * broker executes an id once) and nothing is booked until the commit that also marks it settled.
 */
export async function startBrokerSettlement(options: SettlementOptions): Promise<{ stop: () => Promise<void> }> {
  const { db, logger } = options;
  const batch = options.batch ?? 32;
  const retryMs = options.retryMs ?? 5_000;
  const brokers = { configured: options.broker, paper: options.paperBroker ?? simulatedBroker() };

  const settle = (tenantId: string, id: string) =>
    inTenant(db, tenantId, async (trx, tenant) => {
      const instruction = await lockInstruction(trx, tenantId, id);
      if (!instruction) return;
      const settled = await settleInstruction({ trx, tenant, brokers, now: new Date().toISOString(), logger }, instruction);
      await markSettled(trx, tenantId, id, settled.detail, settled.result);
      logger.info('broker instruction settled', { tenant: tenantId, instruction: id, kind: instruction.kind, outcome: settled.outcome });
    }).catch(async (error: Error) => {
      logger.warn('broker instruction failed; retrying later', { tenant: tenantId, instruction: id, error: error.message });
      await postpone(db, id, retryMs, error.message);
    });

  return startNotifiedLoop({
    name: 'broker settlement',
    databaseUrl: options.databaseUrl,
    channel: 'broker',
    pollMs: options.pollMs ?? 1000,
    logger,
    step: async () => {
      const due = await dueInstructions(db, batch);
      await Promise.all(due.map((d) => settle(d.tenant_id, d.id)));
      return due.length === batch;
    },
  });
}
