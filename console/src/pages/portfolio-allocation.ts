// The portfolio page's chart of its allocation against its policy's model portfolio: an inline SVG
// of two bars per position (current, target), drawn from lib/allocation.ts.
import { empty, formatNumber, h, svg } from '../dom.ts';
import { allocation, barGeometry } from '../lib/allocation.ts';
import type { HoldingRow } from '../lib/valuation.ts';

const WIDTH = 720;
const LABEL = 260;
const ROW = 34;
/** Room for "40.0% / 40.0%" beside the longest bar. */
const RIGHT = 110;
const BAR = 12;
const percent = (weight: number) => `${formatNumber(weight * 100, 1)}%`;

export function allocationChart(
  holdings: readonly HoldingRow[],
  baseCurrency: string,
  model: Record<string, number> | undefined,
  policyName: string,
): HTMLElement {
  if (!model) return empty('No policy: there is no model portfolio to compare with.');
  const { rows, unweighed, total } = allocation(holdings, baseCurrency, model);
  if (rows.length === 0) return empty('Nothing to compare: the model portfolio is empty and the portfolio holds nothing.');
  const g = barGeometry(rows, { width: WIDTH, label: LABEL, row: ROW, right: RIGHT });
  const chart = svg(
    'svg',
    { class: 'allocation-chart', viewBox: `0 0 ${g.width} ${g.height}`, role: 'img', 'aria-labelledby': 'allocation-chart-title' },
    svg('title', { id: 'allocation-chart-title' }, `Current weights against the model portfolio of ${policyName}`),
    g.ticks.map((t) => [
      svg('line', { x1: t.x, x2: t.x, y1: 0, y2: g.height - 20, class: 'grid' }),
      svg('text', { x: t.x, y: g.height - 6, class: 'tick', 'text-anchor': 'middle' }, t.text),
    ]),
    g.bars.map((bar, i) => {
      const row = rows[i]!;
      const label = row.name ? `${row.name} (${row.key})` : row.key;
      return svg(
        'g',
        { class: 'allocation-row', 'data-key': row.key, 'data-current': row.current.toFixed(4), 'data-model': row.model.toFixed(4) },
        svg('text', { x: LABEL - 8, y: bar.y + ROW / 2 + 4, class: 'label', 'text-anchor': 'end' }, label.length > 34 ? `${label.slice(0, 33)}…` : label),
        svg(
          'rect',
          { x: LABEL, y: bar.y + 4, width: bar.current.toFixed(2), height: BAR, class: 'current' },
          svg('title', {}, `${label}: ${percent(row.current)} now`),
        ),
        svg(
          'rect',
          { x: LABEL, y: bar.y + 4 + BAR, width: bar.model.toFixed(2), height: BAR, class: 'model' },
          svg('title', {}, `${label}: ${percent(row.model)} target`),
        ),
        svg(
          'text',
          { x: LABEL + Math.max(bar.current, bar.model) + 6, y: bar.y + ROW / 2 + 4, class: 'value' },
          `${percent(row.current)} / ${percent(row.model)}`,
        ),
      );
    }),
  );
  return h(
    'figure',
    { class: 'allocation' },
    chart,
    h(
      'figcaption',
      {},
      h('span', { class: 'key current' }, 'now'),
      ' ',
      h('span', { class: 'key model' }, `target of ${policyName}`),
      ` · weights of ${formatNumber(total)} ${baseCurrency}`,
      unweighed.length ? ` · not weighed (no price, or no rate to ${baseCurrency}): ${unweighed.join(', ')}` : '',
    ),
  );
}
