import type { Knex } from 'knex';
import type { Logger } from '@platform/shared';
import type { Broker } from '../broker/broker.ts';
import { simulatedBroker } from '../broker/simulated.ts';
import type { Brokers } from '../flows/instruction-handler.ts';
import { prepareInstruction, settleInstruction } from '../flows/settlement.ts';
import { dueInstructions, lockInstruction, markSent, markSettled, postpone } from '../store/broker-instructions.ts';
import { inTenant, type TenantSettings } from '../store/tenant-scope.ts';
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

/** What one pass of the settlement needs; `brokers` as in flows/instruction-handler.ts. */
export type SettlementPass = { db: Knex; brokers: Brokers; logger: Logger; batch?: number; retryMs?: number };

/**
 * One pass over the due broker instructions (deposits, withdrawals, orders): each is first prepared and marked sent in
 * a tenant transaction of its own, committed before the broker is called (a payout resized to what may go, orders
 * without the cash refused; flows/settlement.ts), then locked, sent to the broker and settled in another, by the
 * handler of its kind, so replicas never settle one twice; a crash or error before that commit sends it again
 * unchanged (the broker executes an id once) and nothing is booked until the commit that also marks it settled.
 * Returns whether a full batch was due (more may be waiting).
 */
export async function settleDueInstructions(options: SettlementPass): Promise<boolean> {
  const { db, brokers, logger } = options;
  const batch = options.batch ?? 32;
  const retryMs = options.retryMs ?? 5_000;
  const context = (trx: Knex.Transaction, tenant: TenantSettings) => ({ trx, tenant, brokers, now: new Date().toISOString(), logger });

  const prepare = (tenantId: string, id: string) =>
    inTenant(db, tenantId, async (trx, tenant) => {
      const instruction = await lockInstruction(trx, tenantId, id);
      if (!instruction || instruction.sent) return;
      const prepared = await prepareInstruction(context(trx, tenant), instruction);
      if ('settled' in prepared) {
        await markSettled(trx, tenantId, id, prepared.settled.detail, prepared.settled.result);
        logger.info('broker instruction settled unsent', { tenant: tenantId, instruction: id, kind: instruction.kind, outcome: prepared.settled.outcome });
        return;
      }
      const sent = prepared.send;
      await markSent(trx, tenantId, id, sent.kind === 'ORDERS' ? undefined : sent.amount);
    });

  const settle = (tenantId: string, id: string) =>
    inTenant(db, tenantId, async (trx, tenant) => {
      const instruction = await lockInstruction(trx, tenantId, id);
      if (!instruction || !instruction.sent) return;
      const settled = await settleInstruction(context(trx, tenant), instruction);
      await markSettled(trx, tenantId, id, settled.detail, settled.result);
      logger.info('broker instruction settled', { tenant: tenantId, instruction: id, kind: instruction.kind, outcome: settled.outcome });
    });

  const due = await dueInstructions(db, batch);
  await Promise.all(
    due.map((d) =>
      prepare(d.tenant_id, d.id)
        .then(() => settle(d.tenant_id, d.id))
        .catch(async (error: Error) => {
          logger.warn('broker instruction failed; retrying later', { tenant: d.tenant_id, instruction: d.id, error: error.message });
          await postpone(db, d.id, retryMs, error.message);
        }),
    ),
  );
  return due.length === batch;
}

/** The settlement job: settleDueInstructions whenever an instruction is queued (notified) or every `pollMs`. */
export async function startBrokerSettlement(options: SettlementOptions): Promise<{ stop: () => Promise<void> }> {
  const brokers = { configured: options.broker, paper: options.paperBroker ?? simulatedBroker() };
  return startNotifiedLoop({
    name: 'broker settlement',
    databaseUrl: options.databaseUrl,
    channel: 'broker',
    pollMs: options.pollMs ?? 1000,
    logger: options.logger,
    step: () => settleDueInstructions({ db: options.db, brokers, logger: options.logger, batch: options.batch, retryMs: options.retryMs }),
  });
}
