import { isId } from '@platform/shared';
import type { components } from '@platform/api-types/management';
import { EntityNotFound } from '../../domain/errors.ts';
import { mustBeMachine } from '../../domain/permissions.ts';
import { deposit, recordWithdrawal } from '../../flows/funding.ts';
import { requestWithdrawal } from '../../flows/withdrawals.ts';
import type { PostHandler } from '../idempotency.ts';
import { presentEntity } from '../present.ts';

type DepositEvent = components['schemas']['DepositEvent'];
type WithdrawalEvent = components['schemas']['WithdrawalEvent'];
type WithdrawalRequest = components['schemas']['WithdrawalRequest'];

/**
 * The inbound events of the Client Middleware: POST /events/deposit/ and /events/withdraw/ (docs/adr/0009-funding-modes.md),
 * and the withdrawal the service pays out when asked: POST /portfolios/{portfolio_id}/withdrawals/ (docs/adr/0022-execution-and-withdrawals.md).
 */
export function fundingHandlers(): Record<string, PostHandler> {
  return {
    createDeposit: async (ctx, run) => {
      mustBeMachine(ctx.principal, 'report deposits');
      const event = (ctx.body as DepositEvent).data;
      const { settled, transaction } = await run((trx, tenant) => deposit(trx, tenant, ctx.principal, event, new Date().toISOString()));
      return {
        status: settled ? 201 : 202,
        headers: { Location: `/portfolios/${transaction.parent_id}/transactions/${transaction.id}` },
        body: presentEntity(transaction),
      };
    },
    createWithdrawal: async (ctx, run) => {
      mustBeMachine(ctx.principal, 'report withdrawals');
      const event = (ctx.body as WithdrawalEvent).data;
      const record = await run((trx, tenant) => recordWithdrawal(trx, tenant, ctx.principal, event, new Date().toISOString()));
      const { tenant_id: _tenant, recorded_at, ...rest } = record;
      return {
        status: 201,
        headers: record.transaction_id ? { Location: `/portfolios/${record.portfolio_id}/transactions/${record.transaction_id}` } : undefined,
        body: { ...rest, recorded_datetime: recorded_at },
      };
    },
    // The owner may ask too (domain/permissions.ts mustRequestWithdrawal, checked by the flow on the locked portfolio).
    requestWithdrawal: async (ctx, run) => {
      const portfolioId = ctx.params.portfolio_id!;
      if (!isId('P', portfolioId)) throw new EntityNotFound('portfolio');
      const request = ctx.body as WithdrawalRequest;
      const transaction = await run((trx, tenant) => requestWithdrawal(trx, tenant, ctx.principal, portfolioId, request, new Date().toISOString()));
      return { status: 202, headers: { Location: `/portfolios/${portfolioId}/transactions/${transaction.id}` }, body: presentEntity(transaction) };
    },
  };
}
