import type { Knex } from 'knex';
import { translateUnique } from './unique-violations.ts';

/** An executed withdrawal as the Client Middleware reported it (POST /events/withdraw/). */
export type WithdrawalRow = {
  tenant_id: string;
  portfolio_id: string;
  amount: string;
  currency: string;
  external_id: string | null;
  transaction_id: string | null;
  notification_event_id: string;
  recorded_at: string;
};

/** The unique index of migrations/006_funding.sql: one withdrawal per external_id in a tenant. */
const UNIQUE_FIELDS = { withdrawals_external_id: 'external_id' };

export async function insertWithdrawal(trx: Knex.Transaction, row: WithdrawalRow): Promise<void> {
  await translateUnique(
    trx('withdrawals')
      .insert(row)
      .then(() => undefined),
    UNIQUE_FIELDS,
  );
}
