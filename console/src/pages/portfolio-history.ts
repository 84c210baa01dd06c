// The portfolio page's history: the value over a chosen period from GET /portfolios/{id}/history/,
// drawn as an inline SVG from lib/history-chart.ts with the net deposits and, under a policy, the
// model's value; its returns as text; a refusal (422) or an absent data service (503) as the problem.
import type { components } from '@platform/api-types/management';
import { empty, formatNumber, h, loading, problemView, replace, svg } from '../dom.ts';
import { DEFAULT_SIZE } from '../lib/fan-chart.ts';
import { PERIODS, historyChart, periodQuery, type Period } from '../lib/history-chart.ts';
import type { PageContext } from '../page.ts';

type History = components['schemas']['PortfolioHistory'];

const percent = (fraction: number | null | undefined) => (fraction === null || fraction === undefined ? 'none' : `${formatNumber(fraction * 100, 2)} %`);

/** The section's content: the period picker above the chart of the chosen period (1Y at first). */
export function historySection(ctx: PageContext, id: string, created: string, withModel: boolean): HTMLElement {
  const area = h('div', { class: 'history-area', 'aria-live': 'polite' });
  const picker = h('div', { class: 'choices periods', role: 'group', 'aria-label': 'Period' });
  // A period chosen while another one loads wins: an older answer arriving late is dropped.
  let shown = 0;
  const show = async (period: Period) => {
    const asked = ++shown;
    for (const button of picker.querySelectorAll('button')) button.setAttribute('aria-pressed', String(button.dataset.period === period));
    replace(area, loading('the history'));
    const query = periodQuery(period, new Date().toISOString().slice(0, 10), created, withModel);
    try {
      const answer = await ctx.session.management<History>('GET', `/portfolios/${encodeURIComponent(id)}/history/?${query.toString()}`, undefined, ctx.signal);
      if (asked === shown) replace(area, historyFigure(answer, withModel));
    } catch (error) {
      if (asked === shown) replace(area, problemView(error));
    }
  };
  for (const period of PERIODS) {
    picker.append(h('button', { type: 'button', class: 'small', 'data-period': period, 'aria-pressed': 'false', onClick: () => void show(period) }, period));
  }
  void show('1Y');
  return h('div', {}, picker, area);
}

function historyFigure(answer: History, withModel: boolean): HTMLElement {
  const { points, summary, base_currency: base } = answer;
  if (points.length === 0) return empty('No business day with prices in this period.');
  const chart = historyChart(points);
  const { width, height, left, right } = DEFAULT_SIZE;
  const last = points.at(-1)!;
  const picture = svg(
    'svg',
    {
      viewBox: `0 0 ${width} ${height}`,
      class: 'history-chart',
      role: 'img',
      'aria-labelledby': 'history-title history-desc',
      'data-points': points.length,
      'data-frequency': answer.frequency,
    },
    svg('title', { id: 'history-title' }, `Portfolio value in ${base} over time`),
    svg(
      'desc',
      { id: 'history-desc' },
      `${points.length} points from ${points[0]!.date} to ${last.date}; value at the end ${formatNumber(last.value)} ${base}.`,
    ),
    chart.yTicks.map((t) => [
      svg('line', { x1: left, x2: width - right, y1: t.y, y2: t.y, class: 'grid' }),
      svg('text', { x: left - 8, y: t.y + 4, class: 'tick', 'text-anchor': 'end' }, t.label),
    ]),
    chart.xTicks.map((t) => svg('text', { x: t.x, y: height - 12, class: 'tick', 'text-anchor': 'middle' }, t.label)),
    svg('path', { d: chart.deposits, class: 'deposits' }),
    chart.model ? svg('path', { d: chart.model, class: 'model-value' }) : null,
    svg('path', { d: chart.value, class: 'value' }),
  );
  const facts: [string, string][] = [
    ['Period', `${points[0]!.date} to ${last.date} (${answer.frequency === 'D' ? 'daily' : answer.frequency === 'W' ? 'weekly' : 'monthly'})`],
    ['Value', `${formatNumber(summary.start_value ?? undefined)} → ${formatNumber(summary.end_value ?? undefined)} ${base}`],
    ['Net deposits', `${formatNumber(summary.net_deposits ?? undefined)} ${base}`],
    ['Time-weighted return', percent(summary.twr)],
    ['Money-weighted return (XIRR, a year)', percent(summary.money_weighted_return)],
    ['Max drawdown', percent(summary.max_drawdown)],
  ];
  if (withModel && last.model_twr !== undefined) facts.push(["The model's time-weighted return", percent(last.model_twr)]);
  return h(
    'figure',
    { class: 'history' },
    picture,
    h(
      'figcaption',
      {},
      h(
        'ul',
        { class: 'legend' },
        h('li', {}, h('span', { class: 'swatch value' }), 'value'),
        h('li', {}, h('span', { class: 'swatch deposits' }), 'net deposits'),
        chart.model ? h('li', {}, h('span', { class: 'swatch model-value' }), "the policy's model") : null,
      ),
      h(
        'dl',
        { class: 'facts history-summary' },
        facts.map(([t, v]) => h('div', {}, h('dt', {}, t), h('dd', { 'data-summary': t }, v))),
      ),
    ),
  );
}
