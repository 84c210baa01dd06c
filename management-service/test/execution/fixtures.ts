import type { Knex } from 'knex';
import { createLogger, newId, type Logger } from '@platform/shared';
import type { Broker, CashMove, CashMoveResult, OrderRequest, OrdersResult } from '../../src/broker/broker.ts';
import { simulatedBroker, type SimulatedBrokerOptions } from '../../src/broker/simulated.ts';
import type { Doc } from '../../src/domain/merge.ts';
import { queueExecution } from '../../src/flows/execution.ts';
import { settleDueInstructions, startBrokerSettlement } from '../../src/jobs/broker-settlement.ts';
import { findEntity, insertEntity, updateEntity, type EntityRow } from '../../src/store/entities.ts';
import { inTenant } from '../../src/store/tenant-scope.ts';

/** What the tests of execution and withdrawals share: optimizations stored as the optimizer's result would be, brokers that count, the settlement job run until done. */

export const ISIN_A = 'IE00B4L5Y983';
export const ISIN_B = 'IE00B3F81409';
export const ISIN_C = 'LU0290358497';
export const account = { bank_account_type: 'IBAN', bank_account_number: 'DE89370400440532013000' };

type Order = { shares: number; expected_share_price: number; expected_transaction_cost: number };
export const order = (shares: number, price: number, cost = 0): Order => ({ shares, expected_share_price: price, expected_transaction_cost: cost });

/** A recommended SUCCESS optimization of the portfolio with these orders, as stored. */
export const successfulOptimization = (portfolioId: string, orders: Record<string, Order>): Doc => ({
  external_id: null,
  portfolio_id: portfolioId,
  is_recommended: true,
  status: 'SUCCESS',
  owner_choice: null,
  orders,
  status_detail: null,
  execution_status: null,
  execution_detail: null,
});

/** A simulated broker that counts what it is sent and what it answers (a throw is not an answer). */
export function countingBroker(options: SimulatedBrokerOptions = {}) {
  const inner = simulatedBroker(options);
  const sent: string[] = [];
  const answered: string[] = [];
  const orders: OrderRequest[] = [];
  const moves: CashMove[] = [];
  const broker: Broker = {
    placeOrders: async (request) => {
      sent.push(request.id);
      orders.push(request);
      const result = await inner.placeOrders(request);
      answered.push(request.id);
      return result;
    },
    moveCash: async (move) => {
      sent.push(move.id);
      moves.push(move);
      const result = await inner.moveCash(move);
      answered.push(move.id);
      return result;
    },
  };
  return { broker, sent, answered, orders, moves };
}

/** A logger that keeps its warnings (and prints only errors). */
export function recordingLogger(): { logger: Logger; warnings: { message: string; meta: Record<string, unknown> }[] } {
  const logger = createLogger('test', 'error');
  const warnings: { message: string; meta: Record<string, unknown> }[] = [];
  logger.warn = ((message: string, meta: Record<string, unknown> = {}) => {
    warnings.push({ message, meta });
    return logger;
  }) as Logger['warn'];
  return { logger, warnings };
}

/** Stores a SUCCESS optimization of the portfolio through the store, readable like its portfolio. */
export async function insertOptimization(db: Knex, tenantId: string, portfolioId: string, orders: Record<string, Order>): Promise<string> {
  const id = newId('O');
  await inTenant(db, tenantId, async (trx) => {
    const portfolio = (await findEntity(trx, { tenantId, type: 'portfolios', id: portfolioId }))!;
    const at = new Date();
    await insertEntity(trx, {
      tenant_id: tenantId,
      id,
      type: 'optimizations',
      parent_id: portfolioId,
      version: 1,
      doc: successfulOptimization(portfolioId, orders),
      deleted: false,
      readable_by: portfolio.readable_by,
      modifiable_by: portfolio.modifiable_by,
      created_at: at,
      version_at: at,
      version_author_id: null,
    });
  });
  return id;
}

/**
 * What the optimization flow does when an optimization becomes executable: queueExecution in the transaction that
 * holds the portfolio, and the fields it returns stored with the optimization's next version. Returns those fields.
 */
export async function executeOptimization(db: Knex, tenantId: string, portfolioId: string, optimizationId: string): Promise<Doc | undefined> {
  return inTenant(db, tenantId, async (trx, tenant) => {
    const portfolio = (await findEntity(trx, { tenantId, type: 'portfolios', id: portfolioId }, { forUpdate: true }))!;
    const optimization = (await findEntity(trx, { tenantId, type: 'optimizations', id: optimizationId }, { forUpdate: true }))!;
    const fields = await queueExecution(trx, tenant, portfolio, { id: optimization.id, doc: optimization.doc }, new Date().toISOString());
    if (fields)
      await updateEntity(trx, { ...optimization, version: optimization.version + 1, doc: { ...optimization.doc, ...fields }, version_at: new Date() });
    return fields;
  });
}

export async function readEntity(db: Knex, tenantId: string, type: string, id: string): Promise<EntityRow> {
  return inTenant(db, tenantId, async (trx) => (await findEntity(trx, { tenantId, type, id }))!);
}

/** Broker instructions of the portfolio (all tenants' rows are visible to the owning role). */
export const instructionsOf = (db: Knex, portfolioId: string) =>
  db('broker_instructions')
    .select('id', 'kind', 'transaction_id', db.raw('amount::text as amount'), 'optimization_id', 'settled_at', 'last_error', 'attempts', 'result')
    .where({ portfolio_id: portfolioId })
    .orderBy('created_at');

export const openInstructions = async (db: Knex, portfolioIds?: string[]): Promise<number> => {
  const query = db('broker_instructions').count<{ count: string }[]>('* as count').whereNull('settled_at');
  if (portfolioIds) query.whereIn('portfolio_id', portfolioIds);
  return Number((await query)[0]!.count);
};

/**
 * Runs the settlement job(s) with these brokers until no instruction of the given portfolios is open (every tenant's
 * when none are given), then stops them. `jobs` > 1 races several against one another.
 */
export async function settleAll(
  platform: { database: { db: Knex; url: string } },
  brokers: { broker: Broker; paperBroker?: Broker; logger?: Logger },
  options: { portfolios?: string[]; jobs?: number; timeoutMs?: number } = {},
): Promise<void> {
  const { db, url } = platform.database;
  const logger = brokers.logger ?? createLogger('test', 'error');
  const jobs = await Promise.all(
    Array.from({ length: options.jobs ?? 1 }, () =>
      startBrokerSettlement({ db, databaseUrl: url, broker: brokers.broker, paperBroker: brokers.paperBroker, logger, pollMs: 20, retryMs: 20 }),
    ),
  );
  try {
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    while ((await openInstructions(db, options.portfolios)) > 0) {
      if (Date.now() > deadline) throw new Error('broker instructions still open');
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    await Promise.all(jobs.map((j) => j.stop()));
  }
}

/**
 * One pass of the settlement over every due instruction, with these brokers (the paper one defaults to `broker`); a
 * failed instruction is due again at once. Lets a test step the broker without waiting.
 */
export async function settleOnce(db: Knex, brokers: { broker: Broker; paperBroker?: Broker; logger?: Logger }): Promise<void> {
  const logger = brokers.logger ?? createLogger('test', 'error');
  await settleDueInstructions({ db, brokers: { configured: brokers.broker, paper: brokers.paperBroker ?? brokers.broker }, logger, retryMs: 0 });
}

/** A simulated broker that executes the first call and loses its answer (throws), as a network would; then answers. */
export function answerLostOnce(): { broker: Broker; moves: CashMove[] } {
  const { broker: inner, moves } = countingBroker();
  let lost = false;
  const once = async <T>(run: () => Promise<T>): Promise<T> => {
    const result = await run();
    if (!lost) {
      lost = true;
      throw new Error('the broker’s answer was lost');
    }
    return result;
  };
  return { broker: { moveCash: (m) => once(() => inner.moveCash(m)), placeOrders: (r) => once(() => inner.placeOrders(r)) }, moves };
}

/** What a steerable broker does with the next calls: executes and answers, refuses, executes and loses the answer, or is away. */
export type BrokerMode = 'SETTLE' | 'REFUSE' | 'LOSE_ANSWER' | 'UNAVAILABLE';

/**
 * A broker steered by the test: its `mode` decides what a new instruction becomes, and like every broker it executes an
 * id once and answers a repeat with the first result (whatever the mode then). Keeps every call, for the checks.
 */
export function steeredBroker() {
  const executed = new Map<string, CashMoveResult | OrdersResult>();
  const calls: { id: string; amount?: string }[] = [];
  const state = { mode: 'SETTLE' as BrokerMode };
  async function execute<T extends CashMoveResult | OrdersResult>(id: string, amount: string | undefined, run: (refuse: boolean) => T): Promise<T> {
    calls.push({ id, amount });
    if (state.mode === 'UNAVAILABLE') throw new Error(`broker away before executing ${id}`);
    let result = executed.get(id) as T | undefined;
    if (!result) {
      result = run(state.mode === 'REFUSE');
      executed.set(id, result);
    }
    if (state.mode === 'LOSE_ANSWER') throw new Error(`broker executed ${id}; its answer was lost`);
    return result;
  }
  const broker: Broker = {
    moveCash: (move) =>
      execute<CashMoveResult>(move.id, move.amount, (refuse) =>
        refuse ? { status: 'REJECTED', reason: 'refused by the steered broker' } : { status: 'SETTLED', reference: `ST-${move.id}` },
      ),
    placeOrders: (request) =>
      execute<OrdersResult>(request.id, undefined, (refuse) =>
        refuse
          ? { status: 'REJECTED', reason: 'refused by the steered broker' }
          : {
              status: 'FILLED',
              fills: request.orders.map((o) => ({
                isin: o.isin,
                shares: o.shares,
                price: o.price,
                currency: o.currency,
                reference: `ST-${request.id}-${o.isin}`,
              })),
            },
      ),
  };
  return { broker, state, calls, executed };
}
