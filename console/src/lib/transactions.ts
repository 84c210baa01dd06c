/**
 * A transaction as a line of the portfolio's list: its position and its amount in words. An FX
 * transaction (docs/adr/0022-execution-and-withdrawals.md) reads as the conversion it is, both
 * sides, the rate and the cost, rather than as a bare quantity of one currency. Pure.
 */
export type Conversion = {
  from_currency: string;
  from_amount: string;
  to_currency: string;
  to_amount: string;
  rate: string;
  cost: string;
  cost_currency: string;
};
export type TransactionLike = {
  type?: unknown;
  instrument_id?: unknown;
  currency?: unknown;
  quantity?: unknown;
  unit_price?: unknown;
  conversion?: Conversion | null;
};

const text = (value: unknown) => (value === null || value === undefined ? '' : String(value));

export function transactionLine(t: TransactionLike): { position: string; amount: string; detail: string } {
  if (t.type === 'FX' && t.conversion) {
    const c = t.conversion;
    // The rate is the base-currency value of one unit of the other currency, whichever way the money went.
    const other = c.from_currency === c.cost_currency ? c.to_currency : c.from_currency;
    return {
      position: `$${c.from_currency} → $${c.to_currency}`,
      amount: `${c.from_amount} ${c.from_currency} → ${c.to_amount} ${c.to_currency}`,
      detail: `1 ${other} = ${c.rate} ${c.cost_currency}, cost ${c.cost} ${c.cost_currency}`,
    };
  }
  const position = text(t.instrument_id) || (t.currency ? `$${text(t.currency)}` : '');
  const isOrder = t.type === 'ORDER' && t.unit_price !== null && t.unit_price !== undefined;
  return { position, amount: text(t.quantity), detail: isOrder ? `at ${text(t.unit_price)} ${text(t.currency)}` : '' };
}
