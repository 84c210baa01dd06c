import { formatDay } from '../simulation/dates.ts';
import { dailySeries, type DailySeries } from './daily.ts';
import type { components } from '@platform/api-types/events';
import type { FxAges, FxTable, HistoryRequest, PriceTable } from './input.ts';
import { modelSeries, type ModelSeries } from './model-series.ts';
import { toCents, toReturn } from './rounding.ts';
import { samplePositions } from './sampling.ts';
import { buildTimeline, periodBounds, type Timeline } from './timeline.ts';
import { xirr } from './xirr.ts';

/** The answer as the contract states it (contracts/events.asyncapi.yaml): money to the cent, returns to 1e-8. */
export type HistoryAnswer = components['schemas']['HistoryAnswer'];
export type HistoryPoint = components['schemas']['HistoryPoint'];

/** The unrounded daily series, for the answer and for checks that need every day. */
export type HistorySeries = { timeline: Timeline; daily: DailySeries; model?: ModelSeries; moneyWeighted: number | null };

export function historySeries(request: HistoryRequest, prices: PriceTable, fx: FxTable, ages?: FxAges): HistorySeries {
  const timeline = buildTimeline(request, prices, fx, ages);
  const daily = dailySeries(timeline);
  const prior = timeline.offset > 0 ? prices.days[timeline.offset - 1] : undefined;
  const model = modelSeries(timeline, daily.value[0]!, prior);
  return { timeline, daily, model, moneyWeighted: moneyWeighted(timeline, daily) };
}

/** The start value put in, each flow put in (a withdrawal taken out), the end value taken out. */
function moneyWeighted({ days, flows }: Timeline, { value }: DailySeries): number | null {
  const n = days.length;
  const amounts: number[] = [-value[0]!];
  const years: number[] = [0];
  for (let t = 1; t < n; t++) {
    if (flows[t] === 0) continue;
    amounts.push(-flows[t]!);
    years.push((days[t]! - days[0]!) / 365);
  }
  amounts.push(value[n - 1]!);
  years.push((days[n - 1]! - days[0]!) / 365);
  return xirr(amounts, years);
}

/**
 * A portfolio's value history and returns (docs/adr/0058-portfolio-history.md): computed every
 * business day of the period, shown at the request's frequency, rounded at output only.
 */
export function portfolioHistory(request: HistoryRequest, prices: PriceTable, fx: FxTable, ages?: FxAges): HistoryAnswer {
  const { first, end } = periodBounds(request, prices);
  if (end === first) {
    const none = { start_value: null, end_value: null, net_deposits: null, twr: null, max_drawdown: null, money_weighted_return: null };
    return { base_currency: request.base_currency, frequency: request.frequency, points: [], summary: none };
  }
  const { timeline, daily, model, moneyWeighted: mwr } = historySeries(request, prices, fx, ages);
  const positions = samplePositions(timeline.days, request.frequency);
  const points = Array.from(positions, (t): HistoryPoint => {
    const point: HistoryPoint = {
      date: formatDay(timeline.days[t]!),
      value: toCents(daily.value[t]!),
      cash: toCents(daily.cash[t]!),
      net_deposits: toCents(daily.netDeposits[t]!),
      twr: toReturn(daily.index[t]! - 1),
      drawdown: toReturn(daily.drawdown[t]!),
    };
    if (model) {
      point.model_value = toCents(model.value[t]!);
      point.model_twr = toReturn(model.index[t]! - 1);
      point.deviation = toReturn(daily.index[t]! - model.index[t]!);
    }
    return point;
  });
  const last = timeline.days.length - 1;
  return {
    base_currency: request.base_currency,
    frequency: request.frequency,
    points,
    summary: {
      start_value: toCents(daily.value[0]!),
      end_value: toCents(daily.value[last]!),
      net_deposits: toCents(daily.netDeposits[last]!),
      twr: toReturn(daily.index[last]! - 1),
      max_drawdown: toReturn(daily.drawdown.reduce((a, b) => Math.min(a, b), 0)),
      money_weighted_return: mwr === null ? null : toReturn(mwr),
    },
  };
}
