/**
 * The portfolio page's value history: which period to ask GET /portfolios/{id}/history/ for, and
 * the geometry of its chart (the value, the net deposits and, with a policy, the model's value
 * over time). Pure: query parameters, SVG path data and tick positions, no DOM.
 */
import { DEFAULT_SIZE, niceStep, type Size } from './fan-chart.ts';

export const PERIODS = ['1M', '6M', '1Y', 'all'] as const;
export type Period = (typeof PERIODS)[number];
export type HistoryPoint = { date: string; value: number; net_deposits: number; model_value?: number };

const DAY_MS = 86_400_000;
const dayOf = (date: string) => Date.parse(`${date.slice(0, 10)}T00:00:00Z`) / DAY_MS;
const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
/** Daily points up to a year (about 260 business days); weekly beyond, so that a long history stays a readable line. */
const DAILY_UP_TO_DAYS = 366;

/** The same day `months` earlier, the last day of that month when it is shorter (31 March − 1M = 28 or 29 February). */
function monthsBefore(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const target = new Date(Date.UTC(y, m - 1 - months, 1));
  const last = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d, last));
  return target.toISOString().slice(0, 10);
}

/**
 * The query of a period ending `today`: its first day (none for all, the service starting at the
 * portfolio's creation) and its frequency, D up to a year, W beyond (all: by the creation day).
 */
export function periodQuery(period: Period, today: string, created: string, model: boolean): URLSearchParams {
  const from = period === '1M' ? monthsBefore(today, 1) : period === '6M' ? monthsBefore(today, 6) : period === '1Y' ? monthsBefore(today, 12) : undefined;
  const start = from ?? created.slice(0, 10);
  const frequency = dayOf(today) - dayOf(start) <= DAILY_UP_TO_DAYS ? 'D' : 'W';
  const query = new URLSearchParams();
  // A period that starts before the portfolio existed starts at its creation (the service would answer zeros before it).
  if (from && from > created.slice(0, 10)) query.set('from', from);
  query.set('to', today);
  query.set('frequency', frequency);
  if (model) query.set('model', 'true');
  return query;
}

export type Vertex = { x: number; y: number };
export type HistoryChart = {
  value: string;
  deposits: string;
  model?: string;
  /** The value's vertices, one per point of the answer. */
  vertices: Vertex[];
  xTicks: { x: number; label: string }[];
  yTicks: { y: number; label: string }[];
};

const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

export function historyChart(points: readonly HistoryPoint[], size: Size = DEFAULT_SIZE): HistoryChart {
  const withModel = points.some((p) => Number.isFinite(p.model_value));
  const values = points.flatMap((p) => [p.value, p.net_deposits, ...(withModel && Number.isFinite(p.model_value) ? [p.model_value!] : [])]);
  const yMax = Math.max(1, ...values);
  const yMin = Math.min(0, ...values);
  const step = niceStep(yMax - yMin, 5);
  const top = Math.ceil(yMax / step) * step;
  const bottom = Math.floor(yMin / step) * step;
  const first = dayOf(points[0]?.date ?? '1970-01-01');
  const last = dayOf(points.at(-1)?.date ?? '1970-01-01');
  const plotWidth = size.width - size.left - size.right;
  const plotHeight = size.height - size.top - size.bottom;
  const x = (date: string) => size.left + (last > first ? ((dayOf(date) - first) / (last - first)) * plotWidth : plotWidth / 2);
  const y = (value: number) => size.top + plotHeight - ((value - bottom) / (top - bottom || 1)) * plotHeight;
  const line = (pick: (p: HistoryPoint) => number | undefined) =>
    points
      .filter((p) => Number.isFinite(pick(p)))
      .map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.date).toFixed(1)},${y(pick(p)!).toFixed(1)}`)
      .join(' ');

  // Ticks on the first of a month (or of a year when the months are too many), at most about eight.
  const span = last - first;
  const monthly = span <= 400;
  const starts: number[] = [];
  for (let day = first; day <= last; day++) {
    const date = isoDay(day);
    if (date.endsWith(monthly ? '-01' : '-01-01')) starts.push(day);
  }
  const every = Math.max(1, Math.ceil(starts.length / 8));
  const xTicks = starts
    .filter((_, i) => i % every === 0)
    .map((day) => ({ x: x(isoDay(day)), label: monthly ? isoDay(day).slice(0, 7) : isoDay(day).slice(0, 4) }));
  const yTicks: HistoryChart['yTicks'] = [];
  for (let v = bottom; v <= top + step / 2; v += step) yTicks.push({ y: y(v), label: compact.format(v) });

  return {
    value: line((p) => p.value),
    deposits: line((p) => p.net_deposits),
    model: withModel ? line((p) => p.model_value) : undefined,
    vertices: points.filter((p) => Number.isFinite(p.value)).map((p) => ({ x: x(p.date), y: y(p.value) })),
    xTicks,
    yTicks,
  };
}
