/**
 * An optimization's orders as rows: each ISIN's order beside the state of its execution, read from
 * the ORDER transactions that name the optimization (the broker books one per order), else from
 * the optimization's own execution status. Pure.
 */
export type Order = {
  shares: number;
  expected_share_price: number;
  expected_transaction_cost: number;
  /** The next four only for an instrument priced in another currency than the base (docs/adr/0020-optimizer-model.md). */
  currency?: string;
  expected_share_price_in_currency?: number;
  /** The base-currency value of one unit of `currency`. */
  fx_rate?: number;
  expected_fx_cost?: number;
};
export type OrderTransaction = { instrument_id?: unknown; status?: unknown; type?: unknown };
export type OrderRow = Order & { isin: string; side: 'buy' | 'sell'; status: string };

export function orderRows(orders: Record<string, Order>, transactions: readonly OrderTransaction[], executionStatus: string | null | undefined): OrderRow[] {
  const booked = new Map<string, string>();
  for (const t of transactions)
    if (t.type === 'ORDER' && typeof t.instrument_id === 'string' && typeof t.status === 'string') booked.set(t.instrument_id, t.status);
  const fallback = executionStatus ?? 'NOT SENT';
  return Object.entries(orders)
    .map(([isin, order]) => ({ isin, ...order, side: order.shares < 0 ? ('sell' as const) : ('buy' as const), status: booked.get(isin) ?? fallback }))
    .sort((a, b) => Number(a.side === 'buy') - Number(b.side === 'buy') || a.isin.localeCompare(b.isin));
}
