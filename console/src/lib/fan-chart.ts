/**
 * The geometry of the future-performance fan chart: quantile bands over time (the outermost pair
 * lightest), the median line and the cumulative deposits line, from the answer of
 * `POST /performance/future/`. Pure: SVG path data and tick positions, no DOM.
 */
export type DateSeries = Record<string, number>;
export type FanInput = { value: Record<string, DateSeries>; deposits: DateSeries };
export type Size = { width: number; height: number; left: number; right: number; top: number; bottom: number };

export type FanChart = {
  /** Pairs of quantiles from the outside in, each as a closed area. */
  bands: { lower: string; upper: string; d: string }[];
  /** The middle quantile when their number is odd (the median for 0.05/0.5/0.95). */
  median?: { quantile: string; d: string };
  deposits: string;
  xTicks: { x: number; label: string }[];
  yTicks: { y: number; label: string }[];
  dates: string[];
};

export const DEFAULT_SIZE: Size = { width: 720, height: 340, left: 72, right: 16, top: 16, bottom: 36 };

const dayOf = (date: string) => Date.parse(`${date}T00:00:00Z`) / 86_400_000;

/** A round step for about `count` ticks over `span`: 1, 2 or 5 times a power of ten. */
export function niceStep(span: number, count: number): number {
  if (!(span > 0)) return 1;
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
}

const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

export function fanChart(input: FanInput, size: Size = DEFAULT_SIZE): FanChart {
  const quantiles = Object.keys(input.value).sort((a, b) => Number(a) - Number(b));
  const dates = [...new Set([...Object.keys(input.deposits), ...quantiles.flatMap((q) => Object.keys(input.value[q] ?? {}))])].sort();
  const values = [...quantiles.flatMap((q) => Object.values(input.value[q] ?? {})), ...Object.values(input.deposits)].filter(Number.isFinite);
  const yMax = Math.max(1, ...values);
  const yMin = Math.min(0, ...values);
  const step = niceStep(yMax - yMin, 5);
  const top = Math.ceil(yMax / step) * step;
  const bottom = Math.floor(yMin / step) * step;
  const first = dayOf(dates[0] ?? '1970-01-01');
  const last = dayOf(dates[dates.length - 1] ?? '1970-01-01');
  const plotWidth = size.width - size.left - size.right;
  const plotHeight = size.height - size.top - size.bottom;
  const x = (date: string) => size.left + (last > first ? ((dayOf(date) - first) / (last - first)) * plotWidth : plotWidth / 2);
  const y = (value: number) => size.top + plotHeight - ((value - bottom) / (top - bottom || 1)) * plotHeight;
  const point = (date: string, value: number) => `${x(date).toFixed(1)},${y(value).toFixed(1)}`;
  const line = (series: DateSeries) =>
    dates
      .filter((d) => Number.isFinite(series[d]))
      .map((d, i) => `${i === 0 ? 'M' : 'L'}${point(d, series[d]!)}`)
      .join(' ');

  const bands: FanChart['bands'] = [];
  for (let i = 0; i < Math.floor(quantiles.length / 2); i++) {
    const lower = quantiles[i]!;
    const upper = quantiles[quantiles.length - 1 - i]!;
    const lo = input.value[lower] ?? {};
    const hi = input.value[upper] ?? {};
    const shared = dates.filter((d) => Number.isFinite(lo[d]) && Number.isFinite(hi[d]));
    if (shared.length === 0) continue;
    const along = shared.map((d, j) => `${j === 0 ? 'M' : 'L'}${point(d, hi[d]!)}`).join(' ');
    const back = [...shared]
      .reverse()
      .map((d) => `L${point(d, lo[d]!)}`)
      .join(' ');
    bands.push({ lower, upper, d: `${along} ${back} Z` });
  }
  const middle = quantiles.length % 2 === 1 ? quantiles[(quantiles.length - 1) / 2] : undefined;

  const years = [...new Set(dates.map((d) => d.slice(0, 4)))];
  const every = Math.max(1, Math.ceil(years.length / 10));
  const xTicks = years
    .filter((_, i) => i % every === 0)
    .map((year) => dates.find((d) => d.startsWith(year))!)
    .map((d) => ({ x: x(d), label: d.slice(0, 4) }));
  const yTicks: FanChart['yTicks'] = [];
  for (let v = bottom; v <= top + step / 2; v += step) yTicks.push({ y: y(v), label: compact.format(v) });

  return {
    bands,
    median: middle ? { quantile: middle, d: line(input.value[middle] ?? {}) } : undefined,
    deposits: line(input.deposits),
    xTicks,
    yTicks,
    dates,
  };
}
