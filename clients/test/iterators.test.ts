import assert from 'node:assert/strict';
import { EventFeed, type EventPage } from '../src/event-feed.ts';
import { pagesOf, type Page } from '../src/pages.ts';
import { ApiProblem, isProblem } from '../src/problem.ts';

describe('client iterators and problems (pure)', () => {
  it('pages follow the offset of each `next` link until it is null', async () => {
    const asked: number[] = [];
    const items = Array.from({ length: 5 }, (_, i) => `e${i}`);
    const fetchPage = async (offset: number): Promise<Page<string>> => {
      asked.push(offset);
      const results = items.slice(offset, offset + 2);
      const next = offset + 2 < items.length ? `/users/?query=x&limit=2&offset=${offset + 2}` : null;
      return { next, count: items.length, offset, results };
    };
    const seen: string[] = [];
    for await (const page of pagesOf(fetchPage)) seen.push(...page.results);
    assert.deepEqual(seen, items);
    assert.deepEqual(asked, [0, 2, 4]);
  });

  it('the event feed resumes from its cursor, which moves past a page once its last event was consumed', async () => {
    const log = ['a', 'b', 'c'];
    const fetchPage = async (after: string | undefined): Promise<EventPage<string>> => {
      const from = after === undefined ? 0 : Number(after);
      const results = log.slice(from, from + 2);
      return { results, next_cursor: String(from + results.length) };
    };
    const feed = new EventFeed(fetchPage);
    const first: string[] = [];
    for await (const event of feed) {
      first.push(event);
      if (event === 'a') break;
    }
    assert.deepEqual(first, ['a']);
    assert.equal(feed.cursor, undefined, 'interrupted within the first page: it is read again');

    const again = new EventFeed(fetchPage, { after: feed.cursor });
    const all: string[] = [];
    for await (const event of again) all.push(event);
    assert.deepEqual(all, ['a', 'b', 'c']);
    assert.equal(again.cursor, '3');

    log.push('d');
    const resumed: string[] = [];
    for await (const event of new EventFeed(fetchPage, { after: again.cursor })) resumed.push(event);
    assert.deepEqual(resumed, ['d']);
  });

  it('a following feed polls after an empty page and ends when its signal aborts', async () => {
    const controller = new AbortController();
    let polls = 0;
    const fetchPage = async (): Promise<EventPage<number>> => {
      polls += 1;
      if (polls === 3) return { results: [polls], next_cursor: 'c3' };
      if (polls === 4) controller.abort();
      return { results: [], next_cursor: polls >= 3 ? 'c3' : 'c0' };
    };
    const seen: number[] = [];
    for await (const event of new EventFeed(fetchPage, { follow: true, pollIntervalMs: 0, signal: controller.signal })) seen.push(event);
    assert.deepEqual(seen, [3]);
    assert.equal(polls, 4);
  });

  it('a problem keeps every field of the answer and narrows by code', () => {
    const problem = new ApiProblem(
      {
        type: 'urn:problem:invalid_query',
        title: 'Bad Request',
        status: 400,
        code: 'invalid_query',
        detail: "Invalid query at position 9: expected 'eq', found 'x'.",
        request_id: 'R1',
        errors: [{ loc: ['query', 'query'], msg: 'x', type: 'query' }],
      },
      'GET /users/',
    );
    assert.deepEqual([problem.status, problem.code, problem.title, problem.requestId, problem.position], [400, 'invalid_query', 'Bad Request', 'R1', 9]);
    assert.deepEqual(problem.errors[0]!.loc, ['query', 'query']);
    assert.equal(problem.field, 'query');
    assert.ok(problem.is('invalid_query') && !problem.is('not_found'));
    assert.ok(isProblem(problem, 'invalid_query') && !isProblem(problem, 'not_found') && !isProblem(new Error('x')));
    assert.match(problem.message, /GET \/users\/: 400 invalid_query: .*\(request R1\)/);
  });
});
