import type { Knex } from 'knex';
import { translateUnique } from './entities.ts';

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

export async function insertWithdrawal(trx: Knex.Transaction, row: WithdrawalRow): Promise<void> {
  await translateUnique(trx('withdrawals').insert(row).then(() => undefined));
}
