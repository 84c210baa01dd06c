import type { ConsoleConfig, Session } from './api.ts';
import type { Route } from './lib/route.ts';

/** What a page gets: where to draw, who is signed in, its route, and a signal aborted when the operator leaves it. */
export type PageContext = {
  main: HTMLElement;
  session: Session;
  config: ConsoleConfig;
  route: Route;
  signal: AbortSignal;
  /** Sets the page's title (the document's too) and its heading. */
  title: (text: string) => void;
};

export type Page = (ctx: PageContext) => void | Promise<void>;

/** Waits `ms`, or less when `signal` aborts. */
export const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
