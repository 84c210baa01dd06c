import type { Knex } from 'knex';
import type { Logger } from '@platform/shared';
import type { Broker } from '../broker/broker.ts';
import { settleDeposit } from '../flows/funding.ts';
import { dueInstructions, lockInstruction, markSettled, postpone } from '../store/broker-instructions.ts';
import { inTenant } from '../store/tenant-scope.ts';
import { startNotifiedLoop } from './notified-loop.ts';

export type SettlementOptions = { db: Knex; databaseUrl: string; broker: Broker; logger: Logger; batch?: number; pollMs?: number };

/**
 * Executes the broker instructions of SERVICE-integrated tenants and books their results. Each
 * instruction is locked, sent to the broker and settled in one tenant transaction, so replicas never
 * settle one twice; a crash before commit sends it again (the broker executes an id once).
 */
export async function startBrokerSettlement(options: SettlementOptions): Promise<{ stop: () => Promise<void> }> {
  const { db, broker, logger } = options;
  const batch = options.batch ?? 32;

  const settle = (tenantId: string, id: string) =>
    inTenant(db, tenantId, async (trx, tenant) => {
      const instruction = await lockInstruction(trx, tenantId, id);
      if (!instruction) return;
      if (instruction.kind !== 'DEPOSIT') throw new Error(`no settlement for ${instruction.kind} instructions in this version`);
      const result = await broker.moveCash({
        id: instruction.id,
        tenantId,
        portfolioId: instruction.portfolio_id,
        direction: 'TO_SUBACCOUNT',
        amount: instruction.amount,
        currency: instruction.currency,
      });
      await settleDeposit(trx, tenant, instruction, result, new Date().toISOString());
      await markSettled(trx, tenantId, id, result.status === 'REJECTED' ? result.reason : null);
      logger.info('broker instruction settled', { tenant: tenantId, instruction: id, transaction: instruction.transaction_id, status: result.status });
    }).catch(async (error: Error) => {
      logger.warn('broker instruction failed; retrying later', { tenant: tenantId, instruction: id, error: error.message });
      await postpone(db, id, 5_000, error.message);
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
