// Outbound events benchmark: commit → JetStream through the outbox relay of the management
// service, against publishing the same messages to JetStream from a plain script (the limit).
// 1) a steady 1,000 changes/s for BENCH_SECONDS: delivered rate, p50/p99 commit-to-delivery;
// 2) a backlog of BENCH_BACKLOG events committed at once: the relay's drain rate;
// 3) the same number of messages published by a script with the relay's batch size.
// `npm run bench:events`
import mqtt from 'mqtt';
import pg from 'pg';
import { connectNats, jetstream, newUlid, subjects } from '@platform/shared';
import { createTenant } from '@platform/management-service/admin/provisioning';
import { envelope } from '@platform/management-service/domain/events';
import type { Doc } from '@platform/management-service/domain/merge';
import { median, record, round, startBenchPlatform } from './lib/harness.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 20_000);
// The relay publishes up to this many events at a time (management-service/src/events/relay.ts).
const RELAY_BATCH = 1000;

const platform = await startBenchPlatform({ LOG_LEVEL: 'warn' });
const pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 8 });
const nc = await connectNats(platform.natsUrl, 'bench-events');

const received = new Map<string, number>();
const sub = nc.subscribe(subjects.tenantEvents(platform.tenantId));
void (async () => {
  for await (const msg of sub) received.set(msg.json<{ id: string }>().id, performance.now());
})();
// The same events as an MQTT subscriber of the NATS server's MQTT listener sees them.
const viaMqtt = new Map<string, number>();
const mqttClient = platform.mqttUrl ? await mqtt.connectAsync(platform.mqttUrl, { clientId: 'bench-events', protocolVersion: 4 }) : undefined;
mqttClient?.on('message', (_topic, payload) => viaMqtt.set((JSON.parse(payload.toString()) as { id: string }).id, performance.now()));
await mqttClient?.subscribeAsync(`tenants/${platform.tenantId}/events`, { qos: 0 });

/** One change = one transaction that writes one outbox row; resolves with the commit time. */
async function change(data: Doc): Promise<{ id: string; committed: number }> {
  const event = envelope('portfolios', 'status-update', data, new Date().toISOString(), String(data.id));
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query(`insert into outbox (tenant_id, event_id, entity_id, subject, action, envelope, created_at) values ($1, $2, $3, $4, $5, $6, $7)`, [
      platform.tenantId,
      event.envelope.id,
      event.entityId,
      event.envelope.subject,
      event.envelope.action,
      event.envelope,
      event.envelope.created,
    ]);
    await client.query(`select pg_notify('outbox', '')`);
    await client.query('commit');
    return { id: event.envelope.id, committed: performance.now() };
  } finally {
    client.release();
  }
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

// 1) Steady load.
const commits: { id: string; committed: number }[] = [];
const started = performance.now();
const total = RATE * SECONDS;
const inFlight: Promise<void>[] = [];
for (let i = 0; i < total; i++) {
  const due = started + (i * 1000) / RATE;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  inFlight.push(change({ id: `P${i}`, value: 'ACTIVE' }).then((c) => void commits.push(c)));
  if (inFlight.length > 64) await inFlight.shift();
}
await Promise.all(inFlight);
const offered = round(total / ((performance.now() - started) / 1000));
await until(() => commits.every((c) => received.has(c.id)), 30_000);
const latencies = commits
  .map((c) => (received.get(c.id) ?? Number.NaN) - c.committed)
  .filter((l) => !Number.isNaN(l))
  .sort((a, b) => a - b);
const lastDelivery = Math.max(...commits.map((c) => received.get(c.id) ?? 0));
await until(() => !mqttClient || commits.every((c) => viaMqtt.has(c.id)), 10_000);
const mqttLatencies = commits
  .map((c) => (viaMqtt.get(c.id) ?? Number.NaN) - c.committed)
  .filter((l) => !Number.isNaN(l))
  .sort((a, b) => a - b);
const steady = {
  offered_per_s: offered,
  delivered: latencies.length,
  delivered_per_s: round(latencies.length / ((lastDelivery - started) / 1000)),
  p50_ms: round(latencies[Math.floor(latencies.length * 0.5)] ?? 0),
  p99_ms: round(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
  mqtt_delivered: mqttLatencies.length,
  mqtt_p50_ms: round(mqttLatencies[Math.floor(mqttLatencies.length * 0.5)] ?? 0),
  mqtt_p99_ms: round(mqttLatencies[Math.floor(mqttLatencies.length * 0.99)] ?? 0),
};
console.log('[bench] steady', steady);

// 2) Backlog: BACKLOG events committed in one transaction, drained by the relay. The relay publishes
// a batch in waves with at most one change per entity (docs/adr/0054-publish-waves.md): a backlog of
// distinct entities is one wave per batch, one entity's changes are one publish at a time (the worst case).
async function drainBacklog(count: number, entityOf: (i: number) => string): Promise<{ drained: number; per_s: number }> {
  const ids: string[] = [];
  const client = await pool.connect();
  await client.query('begin');
  for (let from = 0; from < count; from += 1000) {
    const rows = Array.from({ length: Math.min(1000, count - from) }, (_, i) =>
      envelope('portfolios', 'status-update', { id: entityOf(from + i) }, new Date().toISOString(), entityOf(from + i)),
    );
    ids.push(...rows.map((r) => r.envelope.id));
    await client.query(
      `insert into outbox (tenant_id, event_id, entity_id, subject, action, envelope, created_at)
       select $1, e ->> 'id', e -> 'data' ->> 'id', e ->> 'subject', e ->> 'action', e, (e ->> 'created')::timestamptz from jsonb_array_elements($2::jsonb) e`,
      [platform.tenantId, JSON.stringify(rows.map((r) => r.envelope))],
    );
  }
  await client.query(`select pg_notify('outbox', '')`);
  await client.query('commit');
  client.release();
  const drainStart = performance.now();
  await until(() => ids.every((id) => received.has(id)), 120_000);
  const drained = ids.filter((id) => received.has(id)).length;
  return { drained, per_s: round(drained / ((Math.max(...ids.map((id) => received.get(id) ?? 0)) - drainStart) / 1000)) };
}
const backlog = await drainBacklog(BACKLOG, (i) => `B${i}`);
const relayRate = backlog.per_s;
console.log('[bench] relay drain', backlog);
const ONE_ENTITY = BACKLOG / 10;
const oneEntity = await drainBacklog(ONE_ENTITY, () => 'B-one');
console.log('[bench] relay drain, one entity', oneEntity);

// 3) The limit: a plain script publishing the same messages, in batches of the relay's size.
const js = jetstream(nc);
const rawRates: number[] = [];
for (let round_ = 0; round_ < 3; round_++) {
  const t = performance.now();
  for (let from = 0; from < BACKLOG; from += RELAY_BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(RELAY_BATCH, BACKLOG - from) }, () => {
        const id = newUlid();
        return js.publish(
          subjects.tenantEvents('bench-raw'),
          JSON.stringify({ id, created: new Date().toISOString(), version: '1.0.0', subject: 'portfolios', action: 'status-update', data: {} }),
          { msgID: id },
        );
      }),
    );
  }
  rawRates.push(round(BACKLOG / ((performance.now() - t) / 1000)));
}
const rawRate = median(rawRates);

// 4) Partitioned relays (docs/adr/0032-relay-partitions.md): the same backlog over TENANTS tenants,
// drained by P management service processes with RELAY_PARTITIONS=P, each on a platform of its own.
sub.unsubscribe();
await mqttClient?.endAsync();
await nc.close();
await pool.end();
await platform.stop();

const TENANTS = 8;
async function partitionedDrain(partitions: number): Promise<number> {
  const own = await startBenchPlatform({ LOG_LEVEL: 'warn', RELAY_PARTITIONS: String(partitions) }, [], { replicas: partitions });
  const conn = await connectNats(own.natsUrl, 'bench-events-partitions');
  try {
    const tenants = Array.from({ length: TENANTS }, (_, i) => `bench-p${i}`);
    for (const id of tenants) await createTenant(own.db, { id });
    const arrived = new Set<string>();
    let last = 0;
    const all = conn.subscribe('tenants.*.events');
    void (async () => {
      for await (const msg of all) {
        arrived.add(msg.json<{ id: string }>().id);
        last = performance.now();
      }
    })();
    const ids: string[] = [];
    await own.db.transaction(async (trx) => {
      for (let from = 0; from < BACKLOG; from += 1000) {
        const rows = Array.from({ length: Math.min(1000, BACKLOG - from) }, (_, i) => ({
          tenant: tenants[(from + i) % TENANTS]!,
          event: envelope('portfolios', 'status-update', { id: `B${from + i}` }, new Date().toISOString(), `B${from + i}`).envelope,
        }));
        ids.push(...rows.map((r) => r.event.id));
        await trx('outbox').insert(
          rows.map((r) => ({
            tenant_id: r.tenant,
            event_id: r.event.id,
            entity_id: r.event.data.id,
            subject: r.event.subject,
            action: r.event.action,
            envelope: r.event,
            created_at: r.event.created,
          })),
        );
      }
      await trx.raw(`select pg_notify('outbox', '')`);
    });
    const start = performance.now();
    await until(() => arrived.size >= ids.length, 120_000);
    all.unsubscribe();
    const rate = round(arrived.size / ((last - start) / 1000));
    console.log('[bench] partitioned drain', { partitions, delivered: arrived.size, per_s: rate });
    return rate;
  } finally {
    await conn.close();
    await own.stop();
  }
}
const partitioned = [1, 2].map((p) => ({ partitions: p, per_s: 0 }));
for (const row of partitioned) row.per_s = await partitionedDrain(row.partitions);

const markdown = [
  '### Outbound events (`npm run bench:events`)',
  '',
  `Measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine; each change is one committed transaction that writes one outbox row, delivered by the relay of the running management service to JetStream (a core NATS subscriber on the tenant subject timestamps arrival).`,
  '',
  '| measure | figure |',
  '|---|---|',
  `| steady load offered | ${steady.offered_per_s} changes/s for ${SECONDS} s |`,
  `| delivered | ${steady.delivered} of ${total} (${steady.delivered_per_s} events/s) |`,
  `| commit → JetStream delivery p50 / p99 | ${steady.p50_ms} ms / ${steady.p99_ms} ms |`,
  `| commit → MQTT subscriber (NATS MQTT listener, QoS 0) | ${steady.mqtt_delivered} of ${total}, p50 ${steady.mqtt_p50_ms} ms / p99 ${steady.mqtt_p99_ms} ms |`,
  `| relay drain of a ${BACKLOG.toLocaleString('en')}-event backlog, one change per entity | ${relayRate} events/s |`,
  `| relay drain of ${ONE_ENTITY.toLocaleString('en')} changes of one entity (one publish at a time) | ${oneEntity.per_s} events/s |`,
  `| plain script publishing the same messages (the limit, median of 3) | ${rawRate} msgs/s |`,
  `| relay / plain script | ${round(relayRate / rawRate)}× (target ≥ 0.5×) |`,
  '',
  `Partitioned relays ([docs/adr/0032-relay-partitions.md](adr/0032-relay-partitions.md)): the same ${BACKLOG.toLocaleString('en')}-event backlog spread over ${TENANTS} tenants, drained by P management service processes with \`RELAY_PARTITIONS\`=P (a fresh platform each: Postgres, NATS and the P processes share this machine's 2 cores).`,
  '',
  '| relay partitions (processes) | events/s | vs 1 |',
  '|---|---|---|',
  ...partitioned.map((r) => `| ${r.partitions} | ${r.per_s} | ${round(r.per_s / partitioned[0]!.per_s)}× |`),
].join('\n');
record(
  'events',
  {
    steady,
    relay_drain_per_s: relayRate,
    one_entity_drain_per_s: oneEntity.per_s,
    raw_publish_per_s: rawRates,
    ratio: round(relayRate / rawRate),
    partitioned,
  },
  markdown,
);
console.log(markdown);
