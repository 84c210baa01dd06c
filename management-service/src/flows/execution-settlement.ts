import type { Knex } from 'knex';
import type { BrokerFill } from '../broker/broker.ts';
import { transactions } from '../domain/entities/catalog.ts';
import { portfolios } from '../domain/entities/portfolios.ts';
import { brokerFor } from '../domain/broker-role.ts';
import { heldCash, ordersNotCovered } from '../domain/cash-holds.ts';
import { toText } from '@platform/shared';
import type { Conversion } from '../domain/conversions.ts';
import { cashMoves, checkFills, executionFields, holdingsAfterFills, type OrderLine } from '../domain/execution.ts';
import { cashOf } from '../domain/funding.ts';
import type { Doc } from '../domain/merge.ts';
import type { Principal } from '../domain/principal.ts';
import { openInstructions, type OrdersInstruction } from '../store/broker-instructions.ts';
import { findEntity, nextVersion, updateEntity, type EntityRow } from '../store/entities.ts';
import { writeNew, writeNext } from './entity-writes.ts';
import { writeContext } from './funding.ts';
import type { InstructionHandler, InstructionPreparer } from './instruction-handler.ts';
import { queueRoboWithdrawal } from './withdrawal-queue.ts';

/** The optimization's next version with its execution fields (optimizations are written by flows, not by a kind's rules). */
async function recordExecution(trx: Knex.Transaction, optimization: EntityRow, fields: Doc, now: string): Promise<void> {
  await updateEntity(trx, nextVersion(optimization, { ...optimization.doc, ...fields }, { now, author: null }));
}

/**
 * The FX transaction of one conversion: the quantity of the other currency bought (negative: sold) at its rate, both
 * sides and the cost in `conversion`, all exact decimal text.
 */
function conversionTransaction(c: Conversion, base: string, optimizationId: string, now: string): Doc {
  const [from, to] = c.amount.isPositive()
    ? [
        { currency: base, amount: c.baseAmount },
        { currency: c.currency, amount: c.amount },
      ]
    : [
        { currency: c.currency, amount: c.amount.negated() },
        { currency: base, amount: c.baseAmount.negated() },
      ];
  return {
    type: 'FX',
    status: 'SETTLED',
    quantity: toText(c.amount),
    unit_price: toText(c.rate),
    currency: c.currency,
    instrument_id: `$${c.currency}`,
    optimization_id: optimizationId,
    external_id: null,
    datetime: now,
    conversion: {
      from_currency: from.currency,
      from_amount: toText(from.amount),
      to_currency: to.currency,
      to_amount: toText(to.amount),
      rate: toText(c.rate),
      cost: toText(c.cost),
      cost_currency: base,
    },
  };
}

/**
 * Orders go to the broker only when the cash they need if all filled is there, out of the cash not held by the
 * portfolio's other instructions (docs/adr/0022-execution-and-withdrawals.md): otherwise the optimization is REFUSED
 * with the reason and nothing is sent, so their fills never take the cash below zero.
 */
export const prepareOrders: InstructionPreparer<OrdersInstruction> = async ({ trx, now, logger }, instruction) => {
  const tenantId = instruction.tenant_id;
  const portfolio = await findEntity(trx, { tenantId, type: 'portfolios', id: instruction.portfolio_id }, { forUpdate: true });
  const optimization = await findEntity(trx, { tenantId, type: 'optimizations', id: instruction.optimization_id }, { forUpdate: true });
  if (!portfolio || !optimization || optimization.deleted) return { send: instruction };
  const others = heldCash(await openInstructions(trx, tenantId, portfolio.id, instruction.id));
  const short = ordersNotCovered(portfolio.doc, instruction.orders, others);
  if (!short) return { send: instruction };
  await recordExecution(trx, optimization, executionFields('REFUSED', short), now);
  logger.warn('orders not sent: the cash they need is not there', { tenant: tenantId, optimization: optimization.id, reason: short });
  return { settled: { outcome: 'REFUSED', detail: short, result: null } };
};

/**
 * The settlement of an ORDERS instruction (docs/adr/0022-execution-and-withdrawals.md): the orders go to the
 * portfolio's broker (the simulated one for PAPER_MONEY). FILLED: one SETTLED ORDER transaction per filled ISIN, in
 * its currency, one SETTLED FX transaction per currency converted, the holdings and the cash of every currency moved by
 * the fills, conversions and costs in one new portfolio version, the optimization EXECUTED, and
 * a robo-advised portfolio's divest_amount paid out of the freed cash. REJECTED: the optimization REFUSED with the
 * broker's reason, nothing booked.
 */
export const settleOrders: InstructionHandler<OrdersInstruction> = async ({ trx, tenant, brokers, now, logger }, instruction) => {
  const tenantId = instruction.tenant_id;
  const portfolio = await findEntity(trx, { tenantId, type: 'portfolios', id: instruction.portfolio_id }, { forUpdate: true });
  const optimization = await findEntity(trx, { tenantId, type: 'optimizations', id: instruction.optimization_id }, { forUpdate: true });
  if (!portfolio || !optimization || optimization.deleted) return { outcome: 'SKIPPED', detail: 'the portfolio or the optimization is gone', result: null };
  const broker = brokerFor(portfolio.doc) === 'PAPER' ? brokers.paper : brokers.configured;
  const result = await broker.placeOrders({
    id: instruction.id,
    tenantId,
    portfolioId: portfolio.id,
    currency: instruction.currency,
    orders: instruction.orders.map((line: OrderLine) => ({
      isin: line.isin,
      shares: line.shares,
      price: line.price_in_currency ?? line.price,
      currency: line.currency ?? instruction.currency,
    })),
  });
  if (result.status === 'REJECTED') {
    await recordExecution(trx, optimization, executionFields('REFUSED', result.reason), now);
    logger.warn('broker refused an optimization’s orders; nothing booked', { tenant: tenantId, optimization: optimization.id, reason: result.reason });
    return { outcome: result.status, detail: result.reason, result };
  }
  // A fill that does not answer an order is the broker's error: thrown, nothing is booked and the job asks again.
  const fills: BrokerFill[] = checkFills(instruction.orders, result.fills, instruction.currency);
  const principal: Principal = { tenantId, kind: 'machine', subject: 'broker' };
  const wctx = writeContext(principal, tenant, portfolio, now);
  for (const fill of fills) {
    const body = {
      type: 'ORDER',
      status: 'SETTLED',
      quantity: fill.shares,
      unit_price: fill.price,
      currency: fill.currency,
      instrument_id: fill.isin,
      optimization_id: optimization.id,
      external_id: null,
      datetime: now,
    };
    await writeNew(trx, transactions, tenant, wctx, transactions.create(body, wctx));
  }
  const { conversions } = cashMoves(instruction.currency, instruction.orders, fills, (k) => cashOf(portfolio.doc, k));
  for (const conversion of conversions) {
    const body = conversionTransaction(conversion, instruction.currency, optimization.id, now);
    await writeNew(trx, transactions, tenant, wctx, transactions.create(body, wctx));
  }
  const holdings = holdingsAfterFills(portfolio.doc, instruction.currency, instruction.orders, fills);
  const next = await writeNext(trx, portfolios, tenant, wctx, portfolio, portfolios.update(portfolio.doc, { portfolio: holdings }, wctx));
  await recordExecution(trx, optimization, executionFields('EXECUTED'), now);
  await queueRoboWithdrawal(trx, tenant, next, 'EXECUTION', now, instruction.id);
  return { outcome: result.status, detail: null, result };
};
