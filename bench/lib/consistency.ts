// What must hold after a load run, read straight from Postgres (as the superuser: row-level security
// does not hide anything), from JetStream and from the feed: every acknowledged write is there,
// every outbound event is in the stream and in GET /events/ exactly once (each entity's in the order
// written), and the cash of the deposit portfolios is exactly the sum of the acknowledged deposits
// (nothing booked twice, nothing lost).
import type { Knex } from 'knex';
import { connectNats, jetstream, parseDecimal, streams, subjects, sum, toText, type Money } from '@platform/shared';
import type { Ledger } from './middleware.ts';

export type Check = { name: string; ok: boolean; detail: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the relay has published every outbox row of the tenant; the rows still unpublished after `ms`. */
export async function waitForOutbox(db: Knex, tenantId: string, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { n } = (await db('outbox').where({ tenant_id: tenantId }).whereNull('published_at').count({ n: '*' }).first()) as { n: string };
    if (Number(n) === 0 || Date.now() > deadline) return Number(n);
    await sleep(500);
  }
}

export async function checkDeposits(db: Knex, tenantId: string, ledger: Ledger): Promise<Check[]> {
  const acked = [...ledger.deposits].filter(([, d]) => d.acked);
  const rows = (await db('entities')
    .where({ tenant_id: tenantId, type: 'transactions' })
    .whereRaw(`doc ->> 'type' = 'CASH'`)
    .select('external_id', 'parent_id', db.raw(`doc ->> 'quantity' as quantity`), db.raw(`doc ->> 'status' as status`))) as {
    external_id: string | null;
    parent_id: string;
    quantity: string;
    status: string;
  }[];
  const byKey = new Map<string, typeof rows>();
  for (const r of rows) byKey.set(r.external_id ?? '', [...(byKey.get(r.external_id ?? '') ?? []), r]);
  const missing: string[] = [];
  const wrong: string[] = [];
  for (const [key, d] of acked) {
    const found = byKey.get(key) ?? [];
    if (found.length === 0) missing.push(key);
    else if (
      found.length > 1 ||
      found[0]!.parent_id !== d.portfolio ||
      !parseDecimal(found[0]!.quantity).eq(parseDecimal(d.amount)) ||
      found[0]!.status !== 'SETTLED'
    ) {
      wrong.push(`${key}: ${JSON.stringify(found)} for ${d.amount} to ${d.portfolio}`);
    }
  }
  const ackedKeys = new Set(acked.map(([key]) => key));
  const unacknowledged = rows.filter((r) => !ackedKeys.has(r.external_id ?? '')).map((r) => r.external_id);

  // Σ cash of the deposit portfolios against Σ of the acknowledged amounts, and portfolio by portfolio.
  const expected = new Map<string, Money[]>();
  for (const [, d] of acked) expected.set(d.portfolio, [...(expected.get(d.portfolio) ?? []), parseDecimal(d.amount)]);
  const portfolios = [...new Set([...ledger.deposits.values()].map((d) => d.portfolio))];
  const cashRows = (await db('entities')
    .where({ tenant_id: tenantId, type: 'portfolios' })
    .whereIn('id', portfolios)
    .select('id', db.raw(`doc #>> '{portfolio,$EUR}' as cash`))) as { id: string; cash: string | null }[];
  const cash = new Map(cashRows.map((r) => [r.id, parseDecimal(r.cash ?? '0')]));
  const differing = portfolios.filter((id) => !(cash.get(id) ?? parseDecimal('0')).eq(sum(expected.get(id) ?? [])));
  const totalCash = sum([...cash.values()]);
  const totalAcked = sum(acked.map(([, d]) => parseDecimal(d.amount)));

  return [
    {
      name: 'every acknowledged deposit booked once (CASH transaction by external_id, amount, portfolio, SETTLED)',
      ok: missing.length === 0 && wrong.length === 0,
      detail: `${acked.length} acknowledged of ${ledger.deposits.size} sent; ${rows.length} CASH transactions; missing ${missing.length}${missing.length ? ` (${missing.slice(0, 5).join(', ')})` : ''}; wrong ${wrong.length}${wrong.length ? ` (${wrong.slice(0, 3).join('; ')})` : ''}`,
    },
    {
      name: 'no deposit booked without an acknowledgement',
      ok: unacknowledged.length === 0,
      detail: `${unacknowledged.length} CASH transactions whose deposit was never answered 201${unacknowledged.length ? ` (${unacknowledged.slice(0, 5).join(', ')})` : ''}`,
    },
    {
      name: 'no double booking: Σ cash of the deposit portfolios = Σ acknowledged deposits (exact decimals)',
      ok: totalCash.eq(totalAcked) && differing.length === 0,
      detail: `Σ cash ${toText(totalCash)} EUR, Σ acknowledged ${toText(totalAcked)} EUR over ${portfolios.length} portfolios; ${differing.length} portfolios differ`,
    },
  ];
}

export async function checkPatches(db: Knex, tenantId: string, ledger: Ledger): Promise<Check> {
  const ids = [...ledger.patches.keys()];
  const current = new Map(
    (
      (await db('entities').where({ tenant_id: tenantId, type: 'portfolios' }).whereIn('id', ids).select('id', db.raw(`doc ->> 'name' as name`))) as {
        id: string;
        name: string;
      }[]
    ).map((r) => [r.id, r.name]),
  );
  const versions = new Map<string, Set<string>>();
  for (const r of (await db('entity_versions').where({ tenant_id: tenantId }).whereIn('id', ids).select('id', db.raw(`doc ->> 'name' as name`))) as {
    id: string;
    name: string;
  }[]) {
    versions.set(r.id, (versions.get(r.id) ?? new Set()).add(r.name));
  }
  let acked = 0;
  const notLast: string[] = [];
  const lost: string[] = [];
  for (const [id, p] of ledger.patches) {
    acked += p.acked.length;
    const last = p.acked.at(-1);
    if (last !== undefined && current.get(id) !== last) notLast.push(`${id}: ${current.get(id)} instead of ${last}`);
    for (const name of p.acked) if (!versions.get(id)?.has(name)) lost.push(`${id}: ${name}`);
  }
  return {
    name: 'every acknowledged PATCH kept (its name in a version; the last one answered is the current name)',
    ok: notLast.length === 0 && lost.length === 0,
    detail: `${acked} PATCHes answered 200 on ${ids.length} portfolios; ${lost.length} not found in the versions${lost.length ? ` (${lost.slice(0, 3).join('; ')})` : ''}; ${notLast.length} portfolios not on their last name${notLast.length ? ` (${notLast.slice(0, 3).join('; ')})` : ''}`,
  };
}

type OutboxEvent = { event_id: string; entity_id: string };

/** The tenant's outbound events (not internal messages) in outbox order: the order each entity's changes were written in. */
async function outboxEvents(db: Knex, tenantId: string): Promise<OutboxEvent[]> {
  return (await db('outbox').where({ tenant_id: tenantId }).whereNull('nats_subject').orderBy('seq').select('event_id', 'entity_id')) as OutboxEvent[];
}

/** The ids of the tenant's events on its JetStream subject, in stream order. */
async function streamEventIds(natsUrl: string, tenantId: string): Promise<string[]> {
  const nc = await connectNats(natsUrl, 'bench-check');
  const ids: string[] = [];
  try {
    // An ordered consumer of the tenant's subject (nats-server 2.9 knows one filter subject only).
    const consumer = await jetstream(nc).consumers.get(streams.tenantEvents.name, { filter_subjects: subjects.tenantEvents(tenantId) });
    for (;;) {
      let batch = 0;
      for await (const m of await consumer.fetch({ max_messages: 1000, expires: 2000 })) {
        ids.push((m.json() as { id: string }).id);
        batch++;
      }
      if (batch === 0) break;
    }
  } finally {
    await nc.close();
  }
  return ids;
}

/** The ids of the tenant's events as `GET /events/` hands them out, paging with its cursor from the start. */
async function feedEventIds(managementUrl: string, token: string): Promise<string[]> {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const url = `${managementUrl}/events/?limit=100${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`;
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    if (response.status !== 200) throw new Error(`GET /events/: ${response.status} ${(await response.text()).slice(0, 200)}`);
    const page = (await response.json()) as { results: { id: string }[]; next_cursor: string };
    if (page.results.length === 0) return ids;
    ids.push(...page.results.map((e) => e.id));
    after = page.next_cursor;
  }
}

/**
 * `seen` against the outbox: missing, more than once, unknown, and entities whose events came in
 * another order than their changes were written. Across entities there is no order to keep (two
 * transactions commit side by side); of one entity, the outbox order is the order of its versions.
 */
export function compareEvents(outbox: OutboxEvent[], seen: string[]) {
  const entityOf = new Map(outbox.map((e) => [e.event_id, e.entity_id]));
  const count = new Map<string, number>();
  for (const id of seen) count.set(id, (count.get(id) ?? 0) + 1);
  const missing = outbox.filter((e) => !count.has(e.event_id)).map((e) => e.event_id);
  const twice = [...count].filter(([, n]) => n > 1).map(([id, n]) => `${id} ×${n}`);
  const extra = [...count.keys()].filter((id) => !entityOf.has(id));
  const expected = new Map<string, string[]>();
  for (const e of outbox) expected.set(e.entity_id, [...(expected.get(e.entity_id) ?? []), e.event_id]);
  const delivered = new Map<string, string[]>();
  const once = new Set<string>();
  for (const id of seen) {
    const entity = entityOf.get(id);
    if (entity === undefined || once.has(id)) continue;
    once.add(id);
    delivered.set(entity, [...(delivered.get(entity) ?? []), id]);
  }
  const reordered: string[] = [];
  for (const [entity, ids] of delivered) {
    const order = expected.get(entity)!.filter((id) => once.has(id));
    if (order.some((id, i) => ids[i] !== id)) reordered.push(entity);
  }
  return { missing, twice, extra, reordered };
}

function eventCheck(name: string, outbox: OutboxEvent[], seen: string[], where: string): Check {
  const { missing, twice, extra, reordered } = compareEvents(outbox, seen);
  const few = (list: string[]) => (list.length ? ` (${list.slice(0, 5).join(', ')})` : '');
  return {
    name,
    ok: missing.length === 0 && twice.length === 0 && extra.length === 0 && reordered.length === 0,
    detail: `${outbox.length} events in the outbox, ${seen.length} ${where}; missing ${missing.length}${few(missing)}; more than once ${twice.length}${few(twice)}; not in the outbox ${extra.length}; entities out of order ${reordered.length}${few(reordered)}`,
  };
}

/** Every outbound event of the tenant's outbox in JetStream exactly once (by id), nothing else on its subject, each entity's in the order written. */
export async function checkEvents(db: Knex, natsUrl: string, tenantId: string): Promise<Check> {
  const outbox = await outboxEvents(db, tenantId);
  const seen = await streamEventIds(natsUrl, tenantId);
  return eventCheck(
    "every outbound event delivered once, each entity's in the order written (the outbox against JetStream, by event id)",
    outbox,
    seen,
    `messages on ${subjects.tenantEvents(tenantId)}`,
  );
}

/** The same for the feed the tenant pages through: `GET /events/` from the start with its cursor. */
export async function checkFeed(db: Knex, managementUrl: string, token: string, tenantId: string): Promise<Check> {
  const outbox = await outboxEvents(db, tenantId);
  const seen = await feedEventIds(managementUrl, token);
  return eventCheck(
    "every outbound event in GET /events/ once, each entity's in the order written (the outbox against the feed, by event id)",
    outbox,
    seen,
    'events in GET /events/',
  );
}
