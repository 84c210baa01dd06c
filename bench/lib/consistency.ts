// What must hold after a load run, read straight from Postgres (as the superuser: row-level security
// does not hide anything) and from JetStream: every acknowledged write is there, every outbound event
// is in the stream exactly once, and the cash of the deposit portfolios is exactly the sum of the
// acknowledged deposits (nothing booked twice, nothing lost).
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

/** Every outbound event of the tenant's outbox in JetStream exactly once (by id), and nothing else on its subject. */
export async function checkEvents(db: Knex, natsUrl: string, tenantId: string): Promise<Check> {
  const outbox = ((await db('outbox').where({ tenant_id: tenantId }).whereNull('nats_subject').select('event_id')) as { event_id: string }[]).map(
    (r) => r.event_id,
  );
  const nc = await connectNats(natsUrl, 'bench-check');
  const seen = new Map<string, number>();
  let messages = 0;
  try {
    // An ordered consumer of the tenant's subject (nats-server 2.9 knows one filter subject only).
    const consumer = await jetstream(nc).consumers.get(streams.tenantEvents.name, { filter_subjects: subjects.tenantEvents(tenantId) });
    for (;;) {
      let batch = 0;
      for await (const m of await consumer.fetch({ max_messages: 1000, expires: 2000 })) {
        const id = (m.json() as { id: string }).id;
        seen.set(id, (seen.get(id) ?? 0) + 1);
        batch++;
      }
      messages += batch;
      if (batch === 0) break;
    }
  } finally {
    await nc.close();
  }
  const inOutbox = new Set(outbox);
  const missing = outbox.filter((id) => !seen.has(id));
  const twice = [...seen].filter(([, n]) => n > 1).map(([id, n]) => `${id} ×${n}`);
  const extra = [...seen.keys()].filter((id) => !inOutbox.has(id));
  return {
    name: 'every outbound event delivered once (the outbox against JetStream, by event id)',
    ok: missing.length === 0 && twice.length === 0 && extra.length === 0,
    detail: `${outbox.length} events in the outbox, ${messages} messages on ${subjects.tenantEvents(tenantId)}; missing ${missing.length}${missing.length ? ` (${missing.slice(0, 5).join(', ')})` : ''}; more than once ${twice.length}${twice.length ? ` (${twice.slice(0, 5).join(', ')})` : ''}; not in the outbox ${extra.length}`,
  };
}
