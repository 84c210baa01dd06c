import type { components } from '@platform/shared/generated/management';
import { mustBeMachine } from '../../domain/permissions.ts';
import { deposit, recordWithdrawal } from '../../flows/funding.ts';
import type { PostHandler } from '../idempotency.ts';
import { presentEntity } from '../present.ts';

type DepositEvent = components['schemas']['DepositEvent'];
type WithdrawalEvent = components['schemas']['WithdrawalEvent'];

/** The inbound events of the Client Middleware: POST /events/deposit/ and /events/withdraw/ (docs/adr/0009-funding-modes.md). */
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
  };
}
