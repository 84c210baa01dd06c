import { ApiProblem, type EventEnvelope } from '@platform/client';
import type { components } from '@platform/api-types/management';
import { cellText, dataTable, empty, formatTime, h, loading, problemView, replace } from '../dom.ts';
import { fundedSince } from '../lib/funded.ts';
import { href } from '../lib/route.ts';
import { transactionLine } from '../lib/transactions.ts';
import type { Page, PageContext } from '../page.ts';
import { eventDetails, type EventPage } from './events.ts';
import { allocationChart } from './portfolio-allocation.ts';
import { historySection } from './portfolio-history.ts';
import { holdings, readInstruments, valuation } from './portfolio-holdings.ts';
import { latestOptimization, latestOrders } from './portfolio-orders.ts';

type Doc = Record<string, unknown>;
type Schemas = components['schemas'];
type Optimization = Schemas['Optimization'];
type Policy = Schemas['Policy'];
/** A collection page read without `select`: whole entities, never a Selection. */
type PageOf<P extends { results: unknown[] }, T> = Omit<P, 'results'> & { results: T[] };

/** The most events of one portfolio the page reads (the oldest retained first; the page says when it stopped there). */
const EVENT_LIMIT = 10_000;

/**
 * A portfolio: status, holdings valued with the data service's prices in its base currency, its
 * allocation against its policy's model portfolio, its value history, the latest optimization's orders, transactions, optimizations and its
 * events.
 */
export const portfolioPage: Page = async (ctx) => {
  const id = ctx.route.id ?? '';
  ctx.title(`Portfolio ${id}`);
  const status = h('div', {}, loading('the portfolio'));
  ctx.main.append(status);
  const portfolio = await ctx.session.management<Doc>('GET', `/portfolios/${encodeURIComponent(id)}?embed=owned_by_user_id`, undefined, ctx.signal);
  status.remove();
  ctx.title(`Portfolio ${cellText(portfolio.name) || id}`);
  const config = (portfolio.config ?? {}) as Doc;
  const settings = (config.manager_settings ?? {}) as Doc;
  const policyId = typeof settings.policy_id === 'string' ? settings.policy_id : undefined;
  const owner = ((portfolio._embedded ?? {}) as Record<string, Doc>)[cellText(portfolio.owned_by_user_id)];
  const ownerName = owner ? [owner.first_name, owner.last_name].filter(Boolean).join(' ') : '';
  const holdingsOf = (portfolio.portfolio ?? {}) as Record<string, number>;
  const base = cellText(portfolio.base_currency);

  // What several parts of the page need, each read once: the policy, the latest optimization, and
  // the instruments of the holdings, the model and the orders (one reference query for all).
  const policy = policyId
    ? ctx.session.management<Policy>('GET', `/policies/${encodeURIComponent(policyId)}`, undefined, ctx.signal)
    : Promise.resolve(undefined);
  const latest = latestOptimization(ctx, id);
  const instruments = Promise.all([policy.catch(() => undefined), latest.catch(() => undefined)]).then(([p, o]) =>
    readInstruments(ctx, [...Object.keys(holdingsOf), ...Object.keys(p?.config.model_portfolio ?? {}), ...Object.keys(o?.orders ?? {})]),
  );
  const valued = instruments.then((read) => valuation(ctx, holdingsOf, read, base));

  const policyCell = h('span', {}, policyId ? h('a', { href: href('entity', policyId) }, policyId) : 'none');
  if (policyId) {
    void policy.then(
      (p) => p && replace(policyCell, h('a', { href: href('entity', policyId) }, p.name), ' ', h('span', { class: 'mono muted' }, policyId)),
      () => undefined,
    );
  }
  const fundedCell = h('span', {}, loading('the first deposit'));
  void funded(ctx, id, holdingsOf, portfolio.funded_since, fundedCell).catch((error: unknown) => replace(fundedCell, problemView(error)));
  const facts: [string, Node | string][] = [
    ['Status', h('span', { class: `badge status-${cellText(portfolio.status)}` }, cellText(portfolio.status))],
    ['Manager', cellText(config.manager)],
    ['Money', cellText(portfolio.money_type)],
    ['Base currency', cellText(portfolio.base_currency)],
    ['Owner', h('a', { href: href('entity', cellText(portfolio.owned_by_user_id)) }, ownerName || cellText(portfolio.owned_by_user_id))],
    ['Policy', policyCell],
    ['Funded since', fundedCell],
    ['Version', h('a', { href: href('entity', id) }, `${cellText(portfolio.version)} (log and diffs)`)],
  ];
  ctx.main.append(
    h(
      'section',
      { class: 'summary', 'aria-label': 'Summary' },
      h(
        'dl',
        { class: 'facts' },
        facts.map(([t, v]) => h('div', {}, h('dt', {}, t), h('dd', { 'data-fact': t }, v))),
      ),
    ),
    h(
      'div',
      { class: 'two-columns' },
      section('holdings', 'Holdings', async (area) => holdings(holdingsOf, await valued, base, area)),
      section('allocation', 'Allocation against the model portfolio', async (area) => {
        const [p, read] = await Promise.all([policy, valued]);
        replace(area, allocationChart(read.valuation.rows, base, p?.config.model_portfolio, p?.name ?? ''));
      }),
    ),
    h(
      'section',
      { 'aria-labelledby': 'history-title-heading', id: 'history' },
      h('h2', { id: 'history-title-heading' }, 'History'),
      historySection(ctx, id, cellText(portfolio.creation_datetime), Boolean(policyId)),
    ),
    section('orders', 'Orders of the latest optimization', async (area) => latestOrders(ctx, id, await latest, (await instruments).instruments, area)),
    h(
      'div',
      { class: 'two-columns' },
      section('transactions', 'Transactions', (area) => transactions(ctx, id, area)),
      section('optimizations', 'Optimizations', (area) => optimizations(ctx, id, config.manager === 'ROBO_ADVISOR_ADVISORY', area)),
    ),
    section('events', 'Its events', (area) => events(ctx, id, area)),
  );
};

/** A titled part of the page that loads on its own, showing its loading and error states. */
function section(key: string, title: string, load: (area: HTMLElement) => Promise<void>): HTMLElement {
  const area = h('div', { 'aria-live': 'polite' }, loading(title.toLowerCase()));
  void load(area).catch((error: unknown) => replace(area, problemView(error)));
  return h('section', { 'aria-labelledby': `${key}-title`, id: key }, h('h2', { id: `${key}-title` }, title), area);
}

/** "Funded since" from the holdings and the first settled deposit (lib/funded.ts says why not the stored funded_since alone). */
async function funded(ctx: PageContext, id: string, holdingsOf: Record<string, number>, stored: unknown, cell: HTMLElement): Promise<void> {
  // Settled cash in time order: the first deposit is among the first ones (a withdrawal needs cash paid in before it).
  const query = encodeURIComponent("type eq 'CASH' and status eq 'SETTLED' orderby datetime asc");
  const page = await ctx.session.management<PageOf<Schemas['TransactionPage'], Schemas['Transaction']>>(
    'GET',
    `/portfolios/${encodeURIComponent(id)}/transactions/?limit=100&query=${query}`,
    undefined,
    ctx.signal,
  );
  const answer = fundedSince(holdingsOf, page.results, stored);
  const recorded = answer.stored ? h('span', { class: 'hint' }, ` (its funded_since field: ${formatTime(answer.stored)})`) : null;
  if (answer.state === 'deposit')
    return replace(
      cell,
      h('time', { 'data-funded': 'deposit', datetime: answer.since }, formatTime(answer.since)),
      ' ',
      h('span', { class: 'hint' }, 'first settled deposit'),
    );
  if (answer.state === 'empty') return replace(cell, h('span', { 'data-funded': 'empty' }, 'not funded: holds no cash and no position'), recorded);
  replace(cell, h('span', { 'data-funded': 'unknown' }, 'holds positions without a settled deposit'), recorded);
}

async function transactions(ctx: PageContext, id: string, area: HTMLElement): Promise<void> {
  const query = encodeURIComponent('orderby creation_datetime desc');
  const page = await ctx.session.management<PageOf<Schemas['TransactionPage'], Schemas['Transaction']>>(
    'GET',
    `/portfolios/${id}/transactions/?limit=20&query=${query}`,
    undefined,
    ctx.signal,
  );
  if (page.results.length === 0) return replace(area, empty('No transactions yet.'));
  replace(
    area,
    h('p', { class: 'count' }, `${page.results.length} of ${page.count}, newest first`),
    dataTable({
      head: ['Id', 'Type', 'Status', 'Position', 'Quantity', 'Time'],
      body: page.results.map((t) => {
        const line = transactionLine(t);
        return h(
          'tr',
          { 'data-type': cellText(t.type) },
          h('td', {}, h('a', { class: 'mono', href: href('entity', cellText(t.id), { parent: id }) }, cellText(t.id).slice(0, 10) + '…')),
          h('td', {}, cellText(t.type)),
          h('td', {}, cellText(t.status)),
          h('td', { class: 'mono' }, line.position),
          h('td', { class: 'num' }, line.amount, line.detail ? h('span', { class: 'hint' }, ` ${line.detail}`) : null),
          h('td', { class: 'nowrap' }, formatTime(t.datetime)),
        );
      }),
    }),
  );
}

const CHOICES = [
  ['ACCEPT', 'Accept'],
  ['REJECT', 'Reject'],
  ['REOPTIMIZE', 'Reoptimize'],
] as const;

async function optimizations(ctx: PageContext, id: string, advisory: boolean, area: HTMLElement): Promise<void> {
  const page = await ctx.session.management<PageOf<Schemas['OptimizationPage'], Optimization>>(
    'GET',
    `/portfolios/${id}/optimizations/?limit=20`,
    undefined,
    ctx.signal,
  );
  if (page.results.length === 0) return replace(area, empty('No optimizations yet.'));
  // The owner's choice is asked of advisory mandates only, on a recommended SUCCESS nobody chose yet.
  const awaitsChoice = (o: Optimization) => advisory && o.status === 'SUCCESS' && o.is_recommended === true && !o.owner_choice;
  const choose = async (o: Optimization, choice: string, cell: HTMLElement) => {
    replace(cell, loading('the choice'));
    try {
      await ctx.session.management('PATCH', `/optimizations/${o.id}`, { owner_choice: choice }, ctx.signal);
      await optimizations(ctx, id, advisory, area);
    } catch (error) {
      replace(cell, problemView(error));
    }
  };
  replace(
    area,
    h('p', { class: 'count' }, `${page.results.length} of ${page.count}, newest first`),
    dataTable({
      head: ['Id', 'Status', 'Recommended', 'Execution', 'Owner choice', 'Created'],
      body: page.results.map((o) => {
        const choiceCell = h('td', {}, cellText(o.owner_choice));
        if (awaitsChoice(o)) {
          choiceCell.replaceChildren(
            h(
              'div',
              { class: 'choices', role: 'group', 'aria-label': `Owner's choice on ${o.id}` },
              CHOICES.map(([value, label]) => h('button', { type: 'button', class: 'small', onClick: () => void choose(o, value, choiceCell) }, label)),
            ),
          );
        }
        return h(
          'tr',
          {},
          h('td', {}, h('a', { class: 'mono', href: href('entity', o.id) }, o.id.slice(0, 10) + '…')),
          h('td', {}, o.status),
          h('td', {}, o.is_recommended === undefined || o.is_recommended === null ? '' : o.is_recommended ? 'yes' : 'no'),
          h('td', {}, cellText(o.execution_status)),
          choiceCell,
          h('td', { class: 'nowrap' }, formatTime(o.creation_datetime)),
        );
      }),
    }),
  );
}

/** The portfolio's events (its own, its optimizations', its cash notifications), oldest retained first, read by `entity_id`. */
async function events(ctx: PageContext, id: string, area: HTMLElement): Promise<void> {
  const found: EventEnvelope[] = [];
  let cursor: string | undefined;
  while (found.length < EVENT_LIMIT) {
    const query = new URLSearchParams({ entity_id: id, limit: '1000' });
    if (cursor) query.set('after', cursor);
    let page: EventPage;
    try {
      page = await ctx.session.management<EventPage>('GET', `/events/?${query.toString()}`, undefined, ctx.signal);
    } catch (error) {
      if (error instanceof ApiProblem && error.status === 403) return replace(area, empty('The event feed is for machine clients only.'));
      throw error;
    }
    cursor = page.next_cursor;
    found.push(...page.results);
    if (page.results.length < 1000) break;
  }
  if (found.length === 0) return replace(area, empty('No retained events of this portfolio.'));
  replace(
    area,
    found.length >= EVENT_LIMIT ? h('p', { class: 'hint' }, `The oldest ${found.length} retained events of this portfolio, newest first.`) : null,
    dataTable({
      class: 'data feed',
      head: ['Time', 'Event', 'Details'],
      body: found
        .reverse()
        .map((e) =>
          h(
            'tr',
            {},
            h('td', { class: 'nowrap' }, formatTime(e.created)),
            h('td', { class: 'mono' }, `${e.subject}.${e.action}`),
            h('td', { class: 'small' }, eventDetails(e)),
          ),
        ),
    }),
  );
}
