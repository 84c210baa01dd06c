// The administration console: the shell (header, navigation, sign-in) and the router of its pages.
import './styles.css';
import { loadConfig, Session, type ConsoleConfig } from './api.ts';
import { h, problemView, replace } from './dom.ts';
import { href, parseHash } from './lib/route.ts';
import type { Page } from './page.ts';
import { dataPage } from './pages/data.ts';
import { entityPage } from './pages/entity.ts';
import { eventsPage } from './pages/events.ts';
import { portfolioPage } from './pages/portfolio.ts';
import { searchPage } from './pages/search.ts';
import { signInForm } from './pages/sign-in.ts';

const PAGES: Record<string, Page> = { search: searchPage, entity: entityPage, portfolio: portfolioPage, events: eventsPage, data: dataPage };
const NAV: [page: string, label: string][] = [
  ['search', 'Search'],
  ['events', 'Events'],
  ['data', 'Data'],
];

const root = document.getElementById('app')!;
let session: Session | undefined;
let leave: AbortController | undefined;

function shell(config: ConsoleConfig, active: string): HTMLElement {
  const main = h('main', { id: 'main', tabindex: '-1' });
  const skip = h(
    'a',
    {
      class: 'skip',
      href: '#main',
      onClick: (event: Event) => {
        event.preventDefault();
        main.focus();
      },
    },
    'Skip to content',
  );
  const header = h(
    'header',
    { class: 'top' },
    h('p', { class: 'brand' }, 'Administration console'),
    session
      ? h(
          'nav',
          { 'aria-label': 'Main' },
          h(
            'ul',
            {},
            NAV.map(([page, label]) => h('li', {}, h('a', { href: href(page), 'aria-current': page === active ? 'page' : null }, label))),
            h('li', {}, h('a', { href: config.docs_url }, 'API reference')),
          ),
        )
      : null,
    session
      ? h(
          'div',
          { class: 'who' },
          h('span', {}, 'Tenant ', h('strong', {}, session.tenantId)),
          h('button', { type: 'button', class: 'secondary', onClick: () => session?.signOut() }, 'Sign out'),
        )
      : null,
  );
  replace(root, skip, header, main);
  return main;
}

/** Draws the page of the URL's fragment (the sign-in form without a session); `focus`: move focus to it, as after a navigation. */
async function render(config: ConsoleConfig, notice?: string, focus = false): Promise<void> {
  leave?.abort();
  leave = new AbortController();
  const { signal } = leave;
  const route = parseHash(location.hash);
  if (!session) {
    const main = shell(config, '');
    main.append(
      signInForm(config, notice, async (credentials) => {
        session = await Session.signIn(config, credentials, (reason) => {
          session = undefined;
          void render(config, reason);
        });
        await render(config);
      }),
    );
    return;
  }
  const page = PAGES[route.page] ?? searchPage;
  const main = shell(config, route.page);
  // The new page is announced by moving focus to it; a page may then put focus on its first field.
  if (focus) main.focus({ preventScroll: true });
  const heading = h('h1', {}, '');
  main.append(heading);
  const ctx = {
    main,
    session,
    config,
    route,
    signal,
    title: (text: string) => {
      heading.textContent = text;
      document.title = `${text} · Administration console`;
    },
  };
  try {
    await page(ctx);
  } catch (error) {
    if (!signal.aborted) main.append(problemView(error));
  }
}

async function start(): Promise<void> {
  let config: ConsoleConfig;
  try {
    config = await loadConfig();
  } catch (error) {
    replace(root, h('main', { id: 'main' }, h('h1', {}, 'Administration console'), problemView(error)));
    return;
  }
  window.addEventListener('hashchange', () => {
    void render(config, undefined, true);
  });
  await render(config);
}

void start();
