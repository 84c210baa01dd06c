/**
 * A portfolio's allocation against its policy's model portfolio: each position's share of the
 * value in the base currency (holdings valued and converted as valuation.ts does) beside its target
 * weight, cash being what the model leaves over. Positions without a price, or in another currency
 * without a rate, cannot be weighed: they are named apart, never guessed. Weights are fractions
 * for a chart, not money. Pure.
 */
import type { HoldingRow } from './valuation.ts';

export type AllocationRow = { key: string; name: string; current: number; model: number };
export type Allocation = { rows: AllocationRow[]; unweighed: string[]; total: number };

export function allocation(holdings: readonly HoldingRow[], baseCurrency: string, model: Record<string, number>): Allocation {
  const inBase = (row: HoldingRow) => row.baseValue ?? (row.currency === baseCurrency ? row.value : undefined);
  const weighed = holdings.filter((row) => inBase(row) !== undefined);
  const unweighed = holdings.filter((row) => !weighed.includes(row) && row.quantity !== 0).map((row) => row.key);
  const total = weighed.reduce((sum, row) => sum + inBase(row)!, 0);
  const cashKey = `$${baseCurrency}`;
  const names = new Map(holdings.map((row) => [row.key, row.name]));
  const current = new Map(weighed.map((row) => [row.key, total > 0 ? inBase(row)! / total : 0]));
  const modelCash = Math.max(0, 1 - Object.values(model).reduce((sum, w) => sum + w, 0));
  const targets = new Map<string, number>([...Object.entries(model), [cashKey, modelCash]]);
  const keys = [...new Set([...targets.keys(), ...current.keys()])];
  const rows = keys
    .map((key) => ({
      key,
      name: names.get(key) || (key === cashKey ? `Cash (${baseCurrency})` : ''),
      current: current.get(key) ?? 0,
      model: targets.get(key) ?? 0,
    }))
    .filter((row) => row.current > 0 || row.model > 0)
    // Cash last, the rest by target weight, then by current weight.
    .sort((a, b) => Number(a.key === cashKey) - Number(b.key === cashKey) || b.model - a.model || b.current - a.current);
  return { rows, unweighed, total };
}

/** The bars of a horizontal chart, two per row (current above, model below), in SVG units. */
export type BarGeometry = {
  width: number;
  height: number;
  label: number;
  bars: { key: string; y: number; current: number; model: number }[];
  ticks: { x: number; text: string }[];
};

/** `label`: room for the names on the left; `right`: room for the figures beside the longest bar. */
export function barGeometry(rows: readonly AllocationRow[], options: { width: number; label: number; row: number; right: number }): BarGeometry {
  const largest = Math.max(0.0001, ...rows.flatMap((r) => [r.current, r.model]));
  // The axis ends at the next tenth above the largest weight, so that small weights stay readable.
  const end = Math.min(1, Math.ceil(largest * 10) / 10);
  const span = options.width - options.label - options.right;
  const scale = (weight: number) => (weight / end) * span;
  const ticks = Array.from({ length: Math.round(end * 10) + 1 }, (_, i) => i / 10)
    .filter((w, i, all) => all.length <= 6 || i % 2 === 0 || w === end)
    .map((w) => ({ x: options.label + scale(w), text: `${Math.round(w * 100)}%` }));
  return {
    width: options.width,
    height: rows.length * options.row + 24,
    label: options.label,
    bars: rows.map((r, i) => ({ key: r.key, y: i * options.row, current: scale(r.current), model: scale(r.model) })),
    ticks,
  };
}
