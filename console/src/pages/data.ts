import type { components } from '@platform/api-types/data';
import { cellText, dataTable, empty, formatNumber, h, loading, problemView, replace, svg } from '../dom.ts';
import { fanChart, type FanInput } from '../lib/fan-chart.ts';
import type { Page, PageContext } from '../page.ts';

type Schemas = components['schemas'];
type Factor = keyof Schemas['XrayScores'];

const REFERENCE_FIELDS = ['NAME', 'ASSET_CLASS', 'CURRENCY', 'PRICE', 'PRICE_DATE', 'TER', 'REGION', 'SECTOR'];
const DEFAULT_FIELDS = new Set(['NAME', 'ASSET_CLASS', 'CURRENCY', 'PRICE']);
const FACTORS: Factor[] = [
  'VALUE_STARS',
  'GROWTH_STARS',
  'MOMENTUM_STARS',
  'STABILITY_STARS',
  'FINANCIAL_HEALTH_STARS',
  'PROFITABILITY_STARS',
  'SIZE_STARS',
  'DIVIDEND_STARS',
];
const QUANTILES = [0.05, 0.25, 0.5, 0.75, 0.95];
/** Rows of an X-Ray answer shown at once. */
const XRAY_ROWS = 50;

/** Reference data, future performance and X-Ray stars, from the data service with the tenant's API key. */
export const dataPage: Page = (ctx) => {
  ctx.title('Data');
  if (!ctx.session.hasData) {
    ctx.main.append(
      empty(
        ctx.session.dataServiceUrl
          ? 'The data pages need a data API key: sign out and sign in again with one.'
          : 'This deployment names no data service to the console (CONSOLE_DATA_SERVICE_URL of the management service).',
      ),
    );
    return;
  }
  ctx.main.append(referenceSection(ctx), performanceSection(ctx), xraySection(ctx));
};

const field = (id: string, label: string, control: HTMLElement, hint?: string) =>
  h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null);

const checkboxes = <V extends string>(legend: string, name: string, values: V[], checked: (v: V) => boolean) =>
  h(
    'fieldset',
    { class: 'checks' },
    h('legend', {}, legend),
    values.map((value) => h('label', {}, h('input', { type: 'checkbox', name, value, checked: checked(value) }), ` ${value}`)),
  );

const checkedValues = (form: HTMLFormElement, name: string) =>
  [...form.querySelectorAll<HTMLInputElement>(`input[name="${name}"]:checked`)].map((input) => input.value);

/** Runs `work` when the form is sent, showing its loading and error states in `area`. */
function onSubmit(form: HTMLFormElement, area: HTMLElement, what: string, work: () => Promise<void>): void {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    if (button) button.disabled = true;
    replace(area, loading(what));
    work()
      .catch((error: unknown) => replace(area, problemView(error)))
      .finally(() => {
        if (button) button.disabled = false;
      });
  });
}

function referenceSection(ctx: PageContext): HTMLElement {
  const isins = h('textarea', { id: 'isins', name: 'isins', rows: '4', class: 'mono', spellcheck: false, 'aria-describedby': 'isins-hint' });
  const universe = h('input', { id: 'reference-universe', value: 'ROBO', class: 'mono short' });
  const fill = h('button', { type: 'button', class: 'secondary' }, 'Take 10 ISINs of this universe');
  const area = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'stack' },
    field('isins', 'ISINs', isins, 'One per line, or separated by commas or spaces.'),
    h('div', { class: 'row' }, field('reference-universe', 'Universe', universe), fill),
    checkboxes('Fields', 'reference-field', REFERENCE_FIELDS, (f) => DEFAULT_FIELDS.has(f)),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Query reference data')),
  );
  fill.addEventListener('click', () => {
    replace(area, loading(`the universe ${universe.value}`));
    ctx.session
      .data<Schemas['ReferenceDataResponse']>(
        'GET',
        `/data/reference/universe/?universe_name=${encodeURIComponent(universe.value.trim())}&fields=NAME`,
        undefined,
        ctx.signal,
      )
      .then((answer) => {
        isins.value = Object.keys(answer.data).slice(0, 10).join('\n');
        replace(area);
        isins.focus();
      })
      .catch((error: unknown) => replace(area, problemView(error)));
  });
  onSubmit(form, area, 'reference data', async () => {
    const ids = [
      ...new Set(
        isins.value
          .split(/[\s,;]+/)
          .map((s) => s.trim().toUpperCase())
          .filter(Boolean),
      ),
    ];
    const fields = checkedValues(form, 'reference-field');
    if (ids.length === 0) return replace(area, empty('Enter at least one ISIN.'));
    const answer = await ctx.session.data<Schemas['ReferenceDataResponse']>(
      'POST',
      '/data/reference/query/',
      { instrument_ids: ids, fields, fields_extra: [] },
      ctx.signal,
    );
    const unknown = ids.filter((id) => !(id in answer.data));
    const columns = fields.map((f) => f.toLowerCase());
    replace(
      area,
      Object.keys(answer.data).length === 0
        ? empty('None of these ISINs is known to the data service.')
        : dataTable({
            class: 'data reference',
            caption: 'Reference data',
            head: ['ISIN', ...columns],
            body: Object.entries(answer.data).map(([isin, values]) =>
              h(
                'tr',
                {},
                h('th', { scope: 'row', class: 'mono' }, isin),
                columns.map((c) => h('td', { class: typeof values[c] === 'number' ? 'num' : '' }, cellText(values[c]))),
              ),
            ),
          }),
      unknown.length ? h('p', { class: 'state notice' }, `Not known: ${unknown.join(', ')}`) : null,
    );
  });
  return h('section', { 'aria-labelledby': 'reference-title' }, h('h2', { id: 'reference-title' }, 'Reference data'), form, area);
}

function performanceSection(ctx: PageContext): HTMLElement {
  const number = (id: string, value: string, attrs: Record<string, string> = {}) =>
    h('input', { id, name: id, type: 'number', value, required: true, class: 'short', ...attrs });
  const inputs = {
    start: number('start-amount', '10000', { min: '0', step: '100' }),
    monthly: number('monthly-deposit', '200', { min: '0', step: '10' }),
    years: number('years', '10', { min: '1', max: '40', step: '1' }),
    equity: number('equity-share', '60', { min: '0', max: '100', step: '5' }),
    scenarios: number('scenarios', '2000', { min: '100', max: '20000', step: '100' }),
  };
  const area = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'row wrap' },
    field('start-amount', 'Start amount (EUR)', inputs.start),
    field('monthly-deposit', 'Monthly deposit (EUR)', inputs.monthly),
    field('years', 'Years', inputs.years),
    field('equity-share', 'Equity share (%)', inputs.equity),
    field('scenarios', 'Scenarios', inputs.scenarios),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Simulate')),
  );
  onSubmit(form, area, 'the simulation', async () => {
    const equity = Math.min(100, Math.max(0, Number(inputs.equity.value))) / 100;
    const start = new Date();
    const startDate = start.toISOString().slice(0, 10);
    const end = new Date(start);
    end.setUTCFullYear(end.getUTCFullYear() + Math.max(1, Math.round(Number(inputs.years.value))));
    const classes: Record<string, [number, number]> = {};
    if (equity > 0) classes.EQUITY = [equity, equity];
    if (equity < 1) classes.FIXED_INCOME = [1 - equity, 1 - equity];
    const request = {
      asset_classes: classes,
      start_date: startDate,
      end_date: end.toISOString().slice(0, 10),
      currency: 'EUR',
      start_amount: Number(inputs.start.value),
      recurring_deposit_amount: Number(inputs.monthly.value),
      recurring_deposit_frequency: 'M',
      sample_frequency: 'M',
      quantiles: QUANTILES,
      use_expected_returns: true,
      asset_class_st_mean_and_stdev: { EQUITY: { mean: 0.07, stdev: 0.16 }, FIXED_INCOME: { mean: 0.03, stdev: 0.05 } },
      scenarios: Math.round(Number(inputs.scenarios.value)),
      seed: 42,
      asset_class_correlations: { EQUITY: { FIXED_INCOME: 0.2 } },
    };
    const answer = await ctx.session.data<Schemas['FuturePerformanceResponse']>('POST', '/performance/future/', request, ctx.signal);
    replace(area, fanFigure({ value: answer.data.value, deposits: answer.data.deposits.deposits }, equity));
  });
  return h(
    'section',
    { 'aria-labelledby': 'performance-title' },
    h('h2', { id: 'performance-title' }, 'Future performance'),
    h(
      'p',
      { class: 'hint' },
      'A Monte Carlo simulation by the data service: equity 7 % a year (volatility 16 %), fixed income 3 % (5 %), correlation 0.2, rebalanced; quantiles 5–95 % of the value.',
    ),
    form,
    area,
  );
}

/** The fan chart as SVG, with its figures in a table for whoever cannot see it. */
function fanFigure(input: FanInput, equity: number): HTMLElement {
  const chart = fanChart(input);
  const width = 720;
  const height = 340;
  const last = chart.dates[chart.dates.length - 1] ?? '';
  const median = input.value['0.5']?.[last];
  const picture = svg(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, class: 'fan-chart', role: 'img', 'aria-labelledby': 'fan-title fan-desc' },
    svg('title', { id: 'fan-title' }, 'Simulated portfolio value over time'),
    svg(
      'desc',
      { id: 'fan-desc' },
      `Bands from the 5 % to the 95 % quantile and from 25 % to 75 %, the median line and the cumulative deposits. Median at ${last}: ${formatNumber(median, 0)} EUR.`,
    ),
    chart.yTicks.map((t) => [
      svg('line', { x1: 72, x2: width - 16, y1: t.y, y2: t.y, class: 'grid' }),
      svg('text', { x: 64, y: t.y + 4, class: 'tick', 'text-anchor': 'end' }, t.label),
    ]),
    chart.xTicks.map((t) => svg('text', { x: t.x, y: height - 12, class: 'tick', 'text-anchor': 'middle' }, t.label)),
    chart.bands.map((band, i) => svg('path', { d: band.d, class: `band band-${i}`, 'data-quantiles': `${band.lower}-${band.upper}` })),
    chart.median ? svg('path', { d: chart.median.d, class: 'median', 'data-quantile': chart.median.quantile }) : null,
    svg('path', { d: chart.deposits, class: 'deposits' }),
  );
  const yearly = chart.dates.filter((d, i) => i === 0 || d.slice(5) === chart.dates[0]!.slice(5) || i === chart.dates.length - 1);
  const sorted = Object.keys(input.value).sort((a, b) => Number(a) - Number(b));
  return h(
    'figure',
    { class: 'fan' },
    picture,
    h(
      'figcaption',
      {},
      h(
        'ul',
        { class: 'legend' },
        h('li', {}, h('span', { class: 'swatch band-0' }), '5–95 %'),
        h('li', {}, h('span', { class: 'swatch band-1' }), '25–75 %'),
        h('li', {}, h('span', { class: 'swatch median' }), 'median'),
        h('li', {}, h('span', { class: 'swatch deposits' }), 'deposits'),
      ),
      h('p', { class: 'hint' }, `${Math.round(equity * 100)} % equity. Values in EUR.`),
    ),
    h(
      'details',
      {},
      h('summary', {}, 'Show the figures'),
      dataTable({
        head: ['Date', ...sorted.map((q) => `${Number(q) * 100} %`), 'Deposits'],
        body: yearly.map((d) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, d),
            sorted.map((q) => h('td', { class: 'num' }, formatNumber(input.value[q]?.[d], 0))),
            h('td', { class: 'num' }, formatNumber(input.deposits[d], 0)),
          ),
        ),
      }),
    ),
  );
}

const stars = (n: Schemas['Stars'] | undefined) =>
  typeof n === 'number'
    ? h('span', { class: 'stars', 'aria-label': `${n} of 5 stars` }, '★'.repeat(n) + '☆'.repeat(Math.max(0, 5 - n)))
    : h('span', { class: 'muted' }, 'none');

function xraySection(ctx: PageContext): HTMLElement {
  const universe = h('input', { id: 'xray-universe', value: 'ROBO', class: 'mono short', required: true });
  const area = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'stack' },
    field('xray-universe', 'Universe', universe),
    checkboxes('Factors', 'factor', FACTORS, (f) => FACTORS.indexOf(f) < 4),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Show X-Ray stars')),
  );
  onSubmit(form, area, 'X-Ray stars', async () => {
    // Taken from FACTORS, in its order (the boxes' order), so each one is a key of the scores.
    const checked = new Set(checkedValues(form, 'factor'));
    const factors = FACTORS.filter((f) => checked.has(f));
    if (factors.length === 0) return replace(area, empty('Pick at least one factor.'));
    const query = new URLSearchParams({ universe_name: universe.value.trim() });
    for (const f of factors) query.append('fields', f);
    const answer = await ctx.session.data<Schemas['XrayUniverseResponse']>('GET', `/xray/universe/?${query.toString()}`, undefined, ctx.signal);
    const rows = Object.entries(answer[0]?.data ?? {}).sort(([a], [b]) => a.localeCompare(b));
    if (rows.length === 0) return replace(area, empty('The universe has no instruments.'));
    replace(
      area,
      h('p', { class: 'count' }, rows.length > XRAY_ROWS ? `The first ${XRAY_ROWS} of ${rows.length} instruments, by ISIN` : `${rows.length} instruments`),
      dataTable({
        class: 'data xray',
        caption: `X-Ray stars of ${universe.value}`,
        head: [
          'ISIN',
          ...factors.map((f) =>
            f
              .replace(/_STARS$/, '')
              .replace(/_/g, ' ')
              .toLowerCase(),
          ),
        ],
        body: rows.slice(0, XRAY_ROWS).map(([isin, scores]) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row', class: 'mono' }, isin),
            factors.map((f) => h('td', {}, stars(scores[f]))),
          ),
        ),
      }),
    );
  });
  return h('section', { 'aria-labelledby': 'xray-title' }, h('h2', { id: 'xray-title' }, 'X-Ray stars'), form, area);
}
