/**
 * Holdings valued with the data service's prices: an ISIN's quantity times its PRICE (in the
 * instrument's CURRENCY), cash (`$EUR`) at face value. Totals per currency; no conversion between
 * currencies (the interface offers no rates). Pure.
 */
export type Instrument = { name?: string | null; price?: number | null; currency?: string | null };
export type HoldingRow = { key: string; name: string; quantity: number; price?: number; currency?: string; value?: number; cash: boolean };

export function valueHoldings(
  holdings: Record<string, number>,
  instruments: Record<string, Instrument>,
): { rows: HoldingRow[]; totals: Record<string, number> } {
  const totals: Record<string, number> = {};
  const rows = Object.entries(holdings).map(([key, quantity]): HoldingRow => {
    if (key.startsWith('$')) {
      const currency = key.slice(1);
      totals[currency] = (totals[currency] ?? 0) + quantity;
      return { key, name: `Cash (${currency})`, quantity, price: 1, currency, value: quantity, cash: true };
    }
    const instrument = instruments[key];
    const price = typeof instrument?.price === 'number' ? instrument.price : undefined;
    const currency = instrument?.currency ?? undefined;
    const value = price === undefined ? undefined : price * quantity;
    if (value !== undefined && currency) totals[currency] = (totals[currency] ?? 0) + value;
    return { key, name: instrument?.name ?? '', quantity, price, currency, value, cash: false };
  });
  rows.sort((a, b) => Number(a.cash) - Number(b.cash) || (b.value ?? 0) - (a.value ?? 0));
  return { rows, totals };
}
