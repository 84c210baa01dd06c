/** The paging fields of every collection answer (`PageLinks` of the management contract). */
export type Page<T> = { next: string | null; count: number; offset: number; results: T[] };

/**
 * Every page of a collection from `offset` on, as the API pages it: the next page is the one its
 * `next` link names (same query, the next `offset`), until `next` is null. Offset paging shows a
 * collection as it is when each page is read: an entity created meanwhile may shift the pages.
 */
export async function* pagesOf<P extends Page<unknown>>(fetchPage: (offset: number) => Promise<P>, offset = 0): AsyncGenerator<P, void, undefined> {
  for (;;) {
    const page = await fetchPage(offset);
    yield page;
    if (page.next === null || page.results.length === 0) return;
    const named = new URL(page.next, 'http://next.invalid').searchParams.get('offset');
    offset = named !== null && /^\d+$/.test(named) ? Number(named) : page.offset + page.results.length;
  }
}
