import { sleep } from './sleep.ts';

/** What `GET /events/` answers (EventPage): events after the cursor and the cursor to go on from. */
export type EventPage<E> = { results: E[]; next_cursor: string };

export type EventFeedOptions = {
  /** Resume after this cursor (a `feed.cursor` kept from an earlier run); omitted: the oldest retained event. */
  after?: string;
  /** Poll again after an empty page instead of ending: the feed then ends when `signal` aborts. */
  follow?: boolean;
  /** Wait between polls that found nothing, in follow mode (default 1000 ms). */
  pollIntervalMs?: number;
  /** Ends the feed (an iteration under way finishes without an error). */
  signal?: AbortSignal;
};

/**
 * The outbound events of a tenant, in commit order, one at a time (`for await (const event of
 * feed)`). `cursor` is where a later run resumes: it moves past a page once its last event was
 * consumed and the next one asked for, so an interrupted run sees the rest of its page again
 * (at least once: `event.id` tells a repeat).
 */
export class EventFeed<E> implements AsyncIterable<E> {
  cursor: string | undefined;

  constructor(
    private readonly fetchPage: (after: string | undefined, signal: AbortSignal | undefined) => Promise<EventPage<E>>,
    private readonly options: EventFeedOptions = {},
  ) {
    this.cursor = options.after;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<E, void, undefined> {
    const { follow = false, pollIntervalMs = 1000, signal } = this.options;
    for (;;) {
      if (signal?.aborted) return;
      let page: EventPage<E>;
      try {
        page = await this.fetchPage(this.cursor, signal);
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
      for (const event of page.results) yield event;
      this.cursor = page.next_cursor;
      if (page.results.length > 0) continue;
      if (!follow) return;
      try {
        await sleep(pollIntervalMs, signal);
      } catch {
        return;
      }
    }
  }
}
