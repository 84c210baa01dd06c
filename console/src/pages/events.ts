import { ApiProblem, type EventEnvelope } from '@platform/client';
import type { components } from '@platform/api-types/management';
import { cellText, empty, formatTime, h, problemView, replace } from '../dom.ts';
import { entityPath } from '../lib/collections.ts';
import { inRange, timeRange, type TimeRange } from '../lib/event-range.ts';
import { NAMES_PER_QUERY, namesQuery, portfolioOfEvent } from '../lib/portfolio-names.ts';
import { href } from '../lib/route.ts';
import { pause, type Page, type PageContext } from '../page.ts';

/** `GET /events/`'s answer, each event's `data` as the client package reads it (its fields depend on the event). */
export type EventPage = Omit<components['schemas']['EventPage'], 'results'> & { results: EventEnvelope[] };

const SUBJECTS = ['portfolios', 'optimizations', 'assessments', 'notifications'];
/** How often the feed asks for new events, and how many rows it keeps on screen. */
const POLL_MS = 2000;
const KEEP = 300;

/** The entity an event names, as a link to its page. */
export function eventEntity(event: EventEnvelope): HTMLElement | string {
  const data = event.data ?? {};
  const id = typeof data.id === 'string' ? data.id : typeof data.profile_id === 'string' ? data.profile_id : undefined;
  return id ? h('a', { class: 'mono', href: href('entity', id) }, id) : '';
}

/** What the event says beyond its entity, in one line. */
export function eventDetails(event: EventEnvelope): string {
  const { id: _id, external_id: _external, owned_by_external_user_id: _owner, ...rest } = event.data ?? {};
  return Object.entries(rest)
    .map(([key, value]) => `${key}: ${cellText(value)}`)
    .join(' · ');
}

/**
 * The tenant's outbound events, polled from `GET /events/` with its cursor, newest on top,
 * optionally of one subject, one entity (both filtered by the interface) and a time range (applied
 * here to the events read: the interface has no time filter, docs/adr/0036-administration-console.md).
 */
export const eventsPage: Page = async (ctx) => {
  ctx.title('Events');
  const params = ctx.route.params;
  const subject = params.get('subject') ?? '';
  const entity = (params.get('entity') ?? '').trim();
  const fromText = params.get('from') ?? '';
  const toText = params.get('to') ?? '';
  const select = h(
    'select',
    { id: 'subject', name: 'subject' },
    h('option', { value: '' }, 'All subjects'),
    SUBJECTS.map((s) => h('option', { value: s, selected: s === subject }, s)),
  );
  const entityField = h('input', {
    id: 'entity',
    name: 'entity',
    value: entity,
    size: 30,
    class: 'mono',
    spellcheck: 'false',
    placeholder: 'P01JP9ZMQCN0XG3YNRRKJ6T0FZ3',
  });
  // Any step: a range from the address may name seconds and milliseconds (the browser would otherwise refuse whole minutes beside it).
  const fromField = h('input', { id: 'from', name: 'from', type: 'datetime-local', step: 'any', value: fromText, 'aria-describedby': 'range-hint' });
  const toField = h('input', { id: 'to', name: 'to', type: 'datetime-local', step: 'any', value: toText, 'aria-describedby': 'range-hint' });
  const formError = h('p', { class: 'form-error', id: 'filter-error', role: 'alert' });
  const form = h(
    'form',
    { class: 'toolbar filters', 'aria-label': 'Filter the events' },
    h('div', { class: 'field' }, h('label', { for: 'subject' }, 'Subject'), select),
    h('div', { class: 'field' }, h('label', { for: 'entity' }, 'Entity id'), entityField),
    h('div', { class: 'field' }, h('label', { for: 'from' }, 'From (UTC)'), fromField),
    h('div', { class: 'field' }, h('label', { for: 'to' }, 'To (UTC)'), toField),
    h('button', { type: 'submit' }, 'Apply'),
  );
  const go = () => {
    const checked = timeRange(fromField.value, toField.value);
    if ('error' in checked) {
      formError.textContent = checked.error;
      return;
    }
    location.hash = href('events', undefined, { subject: select.value, entity: entityField.value.trim(), from: fromField.value, to: toField.value });
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    go();
  });
  select.addEventListener('change', go);
  const checked = timeRange(fromText, toText);
  if ('error' in checked) formError.textContent = checked.error;
  const range: TimeRange = 'range' in checked ? checked.range : {};
  const ranged = range.from !== undefined || range.to !== undefined;
  const about = h(
    'p',
    { class: 'hint', id: 'range-hint' },
    'Times are UTC. The interface filters by subject and entity; the time range is applied here to the events read.',
  );
  const entityName = h('p', { class: 'entity-name' });
  if (entity && entityPath(entity))
    void nameOf(ctx, entity).then((name) =>
      replace(entityName, 'Events of ', name ? h('strong', {}, name) : null, ' ', h('a', { class: 'mono', href: href('entity', entity) }, entity)),
    );
  let paused = false;
  const toggle = h('button', { type: 'button', class: 'secondary', 'aria-pressed': 'false' }, 'Pause');
  toggle.addEventListener('click', () => {
    paused = !paused;
    toggle.textContent = paused ? 'Resume' : 'Pause';
    toggle.setAttribute('aria-pressed', String(paused));
  });
  const state = h('p', { class: 'feed-state' }, 'Reading the feed…');
  // Announces new events only, not every poll.
  const announce = h('p', { class: 'visually-hidden', role: 'status' });
  const problem = h('div', {});
  const body = h('tbody', {});
  const table = h(
    'table',
    { class: 'data feed' },
    h('caption', { class: 'visually-hidden' }, 'Events, newest first'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Time', 'Event', 'Entity', 'Details'].map((label) => h('th', { scope: 'col' }, label)),
      ),
    ),
    body,
  );
  const emptyState = empty(
    ranged
      ? 'No events in this time range among those read.'
      : subject
        ? `No ${subject} events yet: they appear here as they happen.`
        : 'No events yet: they appear here as they happen.',
  );
  ctx.main.append(
    form,
    formError,
    about,
    entityName,
    h('div', { class: 'toolbar' }, toggle, state),
    announce,
    problem,
    emptyState,
    h('div', { class: 'table-wrap' }, table),
  );
  // A range that is not one reads nothing: the form says what to correct.
  if ('error' in checked) {
    state.textContent = 'Not reading the feed: correct the time range.';
    emptyState.hidden = true;
    return;
  }

  let cursor: string | undefined;
  let seen = 0;
  let read = 0;
  const names = new Map<string, string>();
  while (!ctx.signal.aborted) {
    if (!paused) {
      const before = seen;
      try {
        // From the oldest retained event, page by page, then whatever comes after the cursor.
        for (;;) {
          const query = new URLSearchParams({ limit: '1000' });
          if (cursor) query.set('after', cursor);
          if (subject) query.set('subject', subject);
          if (entity) query.set('entity_id', entity);
          const page = await ctx.session.management<EventPage>('GET', `/events/?${query.toString()}`, undefined, ctx.signal);
          cursor = page.next_cursor;
          read += page.results.length;
          for (const event of page.results) {
            if (!inRange(event.created, range)) continue;
            seen += 1;
            body.prepend(
              h(
                'tr',
                { 'data-event-id': event.id, 'data-entity-id': cellText(event.data?.id) },
                h('td', { class: 'nowrap' }, formatTime(event.created)),
                h('td', { class: 'mono' }, `${event.subject}.${event.action}`),
                h('td', {}, eventEntity(event), portfolioName(event)),
                h('td', { class: 'small' }, eventDetails(event)),
              ),
            );
          }
          while (body.rows.length > KEEP) body.lastElementChild?.remove();
          if (page.results.length < 1000) break;
        }
        await nameRows(ctx, body, names);
        if (seen > before && before > 0) announce.textContent = `${seen - before} new event${seen - before === 1 ? '' : 's'}`;
        emptyState.hidden = seen > 0;
        replace(problem);
        const of = ranged ? ` in the range (of ${read} read)` : '';
        state.textContent = `${seen} event${seen === 1 ? '' : 's'}${of} · checked ${new Date().toLocaleTimeString('en-GB')}`;
      } catch (error) {
        if (ctx.signal.aborted) return;
        replace(problem, problemView(error));
        // A refused filter (400) or feed (403) stays refused: polling again would only repeat the answer.
        if (error instanceof ApiProblem && (error.status === 400 || error.status === 403)) {
          state.textContent = 'Not reading the feed: the request was refused.';
          emptyState.hidden = true;
          return;
        }
        state.textContent = 'The last poll failed; trying again.';
      }
    }
    await pause(POLL_MS, ctx.signal);
  }
};

/** The name of the entity an id names, when it has one and can be read; the id alone otherwise. */
async function nameOf(ctx: PageContext, id: string): Promise<string | undefined> {
  const path = entityPath(id);
  if (!path) return undefined;
  try {
    const doc = await ctx.session.management<{ name?: unknown }>('GET', path, undefined, ctx.signal);
    return typeof doc.name === 'string' ? doc.name : undefined;
  } catch {
    return undefined;
  }
}

/** A place for the name of the portfolio the event is about, filled in by `nameRows`. */
function portfolioName(event: EventEnvelope): HTMLElement | null {
  const id = portfolioOfEvent(event.data);
  return id ? h('span', { class: 'row-name', 'data-name-of': id }) : null;
}

/**
 * Fills in the names of the portfolios the rows are about, those not known yet read in one
 * collection query per poll (a name the query does not answer, such as a deleted portfolio's, stays blank).
 */
async function nameRows(ctx: PageContext, body: HTMLElement, names: Map<string, string>): Promise<void> {
  const blanks = [...body.querySelectorAll<HTMLElement>('[data-name-of]:empty')];
  const asked = [...new Set(blanks.map((el) => el.dataset.nameOf!).filter((id) => !names.has(id)))].slice(0, NAMES_PER_QUERY);
  const query = namesQuery(asked);
  if (query) {
    // Asked once: one the answer leaves out is not asked again on every poll.
    for (const id of asked) names.set(id, '');
    const page = await ctx.session.management<{ results: { id: string; name?: unknown }[] }>(
      'GET',
      `/portfolios/?limit=100&query=${encodeURIComponent(query)}`,
      undefined,
      ctx.signal,
    );
    for (const p of page.results) if (typeof p.name === 'string') names.set(p.id, p.name);
  }
  for (const el of blanks) {
    const name = names.get(el.dataset.nameOf!);
    if (name) el.textContent = el.dataset.nameOf === el.closest('tr')?.dataset.entityId ? name : `of ${name}`;
  }
}
