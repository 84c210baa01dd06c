import type { EventEnvelope } from '@platform/client';
import type { components } from '@platform/api-types/management';
import { cellText, empty, formatTime, h, problemView, replace } from '../dom.ts';
import { href } from '../lib/route.ts';
import { pause, type Page } from '../page.ts';

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

/** The tenant's outbound events, polled from `GET /events/` with its cursor, newest on top, optionally of one subject. */
export const eventsPage: Page = async (ctx) => {
  ctx.title('Events');
  const subject = ctx.route.params.get('subject') ?? '';
  const select = h(
    'select',
    { id: 'subject', name: 'subject' },
    h('option', { value: '' }, 'All subjects'),
    SUBJECTS.map((s) => h('option', { value: s, selected: s === subject }, s)),
  );
  select.addEventListener('change', () => {
    location.hash = href('events', undefined, { subject: select.value });
  });
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
  const emptyState = empty(subject ? `No ${subject} events yet: they appear here as they happen.` : 'No events yet: they appear here as they happen.');
  ctx.main.append(
    h('div', { class: 'toolbar' }, h('div', { class: 'field' }, h('label', { for: 'subject' }, 'Subject'), select), toggle, state),
    announce,
    problem,
    emptyState,
    h('div', { class: 'table-wrap' }, table),
  );

  let cursor: string | undefined;
  let seen = 0;
  while (!ctx.signal.aborted) {
    if (!paused) {
      const before = seen;
      try {
        // From the oldest retained event, page by page, then whatever comes after the cursor.
        for (;;) {
          const query = new URLSearchParams({ limit: '1000' });
          if (cursor) query.set('after', cursor);
          if (subject) query.set('subject', subject);
          const page = await ctx.session.management<EventPage>('GET', `/events/?${query.toString()}`, undefined, ctx.signal);
          cursor = page.next_cursor;
          for (const event of page.results) {
            body.prepend(
              h(
                'tr',
                { 'data-event-id': event.id, 'data-entity-id': cellText(event.data?.id) },
                h('td', { class: 'nowrap' }, formatTime(event.created)),
                h('td', { class: 'mono' }, `${event.subject}.${event.action}`),
                h('td', {}, eventEntity(event)),
                h('td', { class: 'small' }, eventDetails(event)),
              ),
            );
          }
          seen += page.results.length;
          while (body.rows.length > KEEP) body.lastElementChild?.remove();
          if (page.results.length < 1000) break;
        }
        if (seen > before && before > 0) announce.textContent = `${seen - before} new event${seen - before === 1 ? '' : 's'}`;
        emptyState.hidden = seen > 0;
        replace(problem);
        state.textContent = `${seen} event${seen === 1 ? '' : 's'} · checked ${new Date().toLocaleTimeString('en-GB')}`;
      } catch (error) {
        if (ctx.signal.aborted) return;
        replace(problem, problemView(error));
        state.textContent = 'The last poll failed; trying again.';
      }
    }
    await pause(POLL_MS, ctx.signal);
  }
};
