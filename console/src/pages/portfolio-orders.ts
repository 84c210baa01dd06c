// The portfolio page's latest optimization with its orders inline, each beside its execution.
import { ApiProblem } from '@platform/client';
import type { components } from '@platform/api-types/management';
import { dataTable, empty, formatNumber, formatTime, h, replace } from '../dom.ts';
import { orderRows, type Order } from '../lib/orders.ts';
import { href } from '../lib/route.ts';
import type { Instrument } from '../lib/valuation.ts';
import type { PageContext } from '../page.ts';

type Schemas = components['schemas'];
export type Optimization = Schemas['Optimization'];
type TransactionPage = Omit<Schemas['TransactionPage'], 'results'> & { results: Schemas['Transaction'][] };

/** The newest optimization of the portfolio, finished or PENDING; undefined when it has none (404). */
export async function latestOptimization(ctx: PageContext, id: string): Promise<Optimization | undefined> {
  try {
    return await ctx.session.management<Optimization>('GET', `/portfolios/${encodeURIComponent(id)}/optimizations/latest/`, undefined, ctx.signal);
  } catch (error) {
    if (error instanceof ApiProblem && error.code === 'not_found') return undefined;
    throw error;
  }
}

export async function latestOrders(
  ctx: PageContext,
  id: string,
  latest: Optimization | undefined,
  instruments: Record<string, Instrument>,
  area: HTMLElement,
): Promise<void> {
  if (!latest) return replace(area, empty('No optimization yet.'));
  const heading = h(
    'p',
    { class: 'count' },
    h('a', { class: 'mono', href: href('entity', latest.id) }, latest.id),
    ` · ${latest.status}`,
    latest.is_recommended ? ' · recommended' : '',
    ` · ${formatTime(latest.creation_datetime)}`,
  );
  const orders = latest.orders as Record<string, Order>;
  if (Object.keys(orders).length === 0) {
    return replace(area, heading, empty(latest.status_detail ? `No orders: ${latest.status_detail}` : `No orders (${latest.status}).`));
  }
  const query = encodeURIComponent(`type eq 'ORDER' and optimization_id eq '${latest.id}'`);
  const booked = await ctx.session.management<TransactionPage>(
    'GET',
    `/portfolios/${encodeURIComponent(id)}/transactions/?limit=100&query=${query}`,
    undefined,
    ctx.signal,
  );
  const rows = orderRows(orders, booked.results, latest.execution_status);
  // The currency columns only when an order needs them: a portfolio trading in its base currency alone reads as it always did.
  const inCurrency = rows.some((row) => row.currency);
  replace(
    area,
    heading,
    dataTable({
      class: 'data orders',
      caption: 'Orders of the latest optimization',
      head: [
        'ISIN',
        'Name',
        'Side',
        'Shares',
        'Expected price',
        'Expected cost',
        'Status',
        ...(inCurrency ? ['Currency', 'Price in currency', 'FX rate', 'FX cost'] : []),
      ],
      body: rows.map((row) =>
        h(
          'tr',
          { 'data-isin': row.isin },
          h('th', { scope: 'row', class: 'mono' }, row.isin),
          h('td', {}, instruments[row.isin]?.name ?? ''),
          h('td', {}, row.side),
          h('td', { class: 'num' }, formatNumber(row.shares, Number.isInteger(row.shares) ? 0 : 4)),
          h('td', { class: 'num' }, formatNumber(row.expected_share_price)),
          h('td', { class: 'num' }, formatNumber(row.expected_transaction_cost)),
          h('td', {}, h('span', { class: `badge status-${row.status.replace(/\s+/g, '_')}` }, row.status)),
          inCurrency
            ? [
                h('td', {}, row.currency ?? ''),
                h('td', { class: 'num' }, formatNumber(row.expected_share_price_in_currency)),
                h('td', { class: 'num' }, formatNumber(row.fx_rate, 6)),
                h('td', { class: 'num' }, formatNumber(row.expected_fx_cost)),
              ]
            : null,
        ),
      ),
    }),
    latest.execution_detail ? h('p', { class: 'hint' }, `The broker: ${latest.execution_detail}`) : null,
  );
}
