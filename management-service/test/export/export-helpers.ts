import assert from 'node:assert/strict';
import type { Api } from '@platform/test-support/fixtures';

/** GET of a path as the machine client, which must answer 200. */
export async function got(api: Api, path: string): Promise<any> {
  const res = await api('GET', path);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

/** POST of a create, which must answer 201; its id. */
export async function created(api: Api, path: string, body: unknown): Promise<string> {
  const res = await api('POST', path, body);
  assert.equal(res.status, 201, res.text);
  return res.body.id as string;
}

/** The entity at each of its versions, as GET ...?version=n answers it: what an export's `versions` must equal. */
export async function everyVersion(api: Api, path: string): Promise<any[]> {
  const current = await got(api, path);
  const out = [];
  for (let v = 1; v <= current.version; v++) out.push(await got(api, `${path}?version=${v}`));
  return out;
}

/** The tenant's whole event feed, page by page. */
export async function wholeFeed(api: Api): Promise<any[]> {
  const all: any[] = [];
  let after = '';
  for (;;) {
    const page = await got(api, `/events/?limit=1000${after ? `&after=${after}` : ''}`);
    all.push(...page.results);
    if (page.results.length === 0) return all;
    after = page.next_cursor;
  }
}

/** The ids of the events about one entity, through GET /events/?entity_id=. */
export async function eventIdsAbout(api: Api, entityId: string): Promise<string[]> {
  return (await got(api, `/events/?limit=1000&entity_id=${entityId}`)).results.map((e: { id: string }) => e.id);
}
