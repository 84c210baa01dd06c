import assert from 'node:assert/strict';
import mqtt, { type IConnackPacket } from 'mqtt';
import { connectNats, jetstreamManager, streams, type NatsConnection } from '@platform/shared';
import { build, machineApi } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform, type TestTenant } from '@platform/test-support/platform';
import { createBusCredential } from '../../src/admin/bus-credentials.ts';
import { startBusUsersSync, type BusUsersSync } from '../../src/bus/sync.ts';
import { listBusCredentials, revokeBusCredential } from '../../src/store/bus-credentials.ts';

// docs/adr/0026-bus-authorization.md: every connection logs in; a tenant reads only its own events.
const SYNC_MS = 500;
const REVOCATION_BOUND_MS = 3 * SYNC_MS + 2000;

type Envelope = { subject: string; action: string; data: { id: string } };
type Credential = { username: string; password: string };
type Received = { topic: string; body: Envelope };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

describe('the event bus: logins and per-tenant permissions (NATS and its MQTT listener)', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let sync: BusUsersSync;
  let natsAddress: string;
  let mqttAddress: string;
  let admin: NatsConnection;
  let a: TestTenant;
  let b: TestTenant;
  let busA: Credential;
  let busB: Credential;
  const open: { close: () => Promise<unknown> }[] = [];
  let serverLog = '';
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(serverLog.slice(-6000));
  });

  const natsAs = async (c: Credential) => {
    const nc = await connectNats(natsAddress, 'bus-test', { user: c.username, pass: c.password, reconnect: false });
    open.push({ close: () => nc.close().catch(() => undefined) });
    return nc;
  };
  /** Connects over MQTT (a clean session with a random client id unless told); the CONNACK tells whether a session was there. */
  const mqttSession = async (c?: Credential, session: { clientId?: string; clean?: boolean } = {}) => {
    const client = mqtt.connect(mqttAddress, {
      protocolVersion: 4,
      reconnectPeriod: 0,
      connectTimeout: 5000,
      clientId: session.clientId ?? `bus-test-${Math.random().toString(36).slice(2)}`,
      clean: session.clean ?? true,
      ...(c ? { username: c.username, password: c.password } : {}),
    });
    open.push({ close: () => client.endAsync(true).catch(() => undefined) });
    // Settles on every outcome: a refusal, an error or a connection closed before CONNACK.
    const connack = await new Promise<IConnackPacket>((resolve, reject) => {
      client.once('connect', resolve);
      client.once('error', reject);
      client.once('close', () => reject(new Error('closed before CONNACK')));
    });
    return { client, sessionPresent: connack.sessionPresent };
  };
  const mqttAs = async (c?: Credential) => (await mqttSession(c)).client;
  const messagesIn = async () => {
    const jsm = await jetstreamManager(admin);
    const [events, platformStream] = await Promise.all([jsm.streams.info(streams.tenantEvents.name), jsm.streams.info(streams.platform.name)]);
    return { tenantEvents: events.state.messages, platform: platformStream.state.messages };
  };
  const createPortfolio = async (tenant: TestTenant) => {
    const api = await machineApi(platform, tenant);
    const owner = (await api('POST', '/users/', {})).body.id as string;
    return (await api('POST', '/portfolios/', build.portfolio(owner))).body.id as string;
  };

  before(async () => {
    platform = await startTestPlatform({}, { ownNats: true });
    const server = platform.natsServer!;
    server.process.stderr?.on('data', (chunk: Buffer) => (serverLog += chunk.toString()));
    natsAddress = `nats://${new URL(platform.natsUrl).host}`;
    mqttAddress = server.mqttUrl!;
    sync = startBusUsersSync({
      db: platform.database.db,
      file: server.users.file,
      source: server.users.source,
      intervalMs: SYNC_MS,
      reload: server.reload,
      log: () => undefined,
    });
    admin = await connectNats(platform.natsUrl, 'bus-test-admin');
    a = await platform.tenant();
    b = await platform.tenant();
    busA = await createBusCredential(platform.database.db, a.tenantId);
    busB = await createBusCredential(platform.database.db, b.tenantId);
    await sync.syncNow();
    // The reload is asynchronous in the server: wait until A's credential is accepted.
    for (let i = 0; ; i++) {
      try {
        await (await natsAs(busA)).close();
        break;
      } catch (error) {
        if (i > 40) throw error;
        await sleep(50);
      }
    }
  });
  after(async () => {
    for (const c of open) await c.close();
    await admin?.close();
    await sync?.stop();
    await platform?.stop();
  });

  it('refuses anonymous connections and wrong passwords, over NATS and MQTT', async () => {
    await assert.rejects(connectNats(natsAddress, 'anonymous', { reconnect: false }), /Authorization Violation/i);
    await assert.rejects(natsAs({ username: busA.username, password: 'wrong' }), /Authorization Violation/i);
    await assert.rejects(mqttAs(), /Not authorized/i);
    await assert.rejects(mqttAs({ username: busA.username, password: 'wrong' }), /Not authorized/i);
  });

  it("delivers a tenant's own events over NATS and MQTT (QoS 0 and 1), and not another tenant's", async () => {
    const nc = await natsAs(busA);
    const overNats: Envelope[] = [];
    const sub = nc.subscribe(`tenants.${a.tenantId}.>`, { callback: (_e, m) => void overNats.push(m.json<Envelope>()) });
    const overMqtt = { 0: [] as Received[], 1: [] as Received[] };
    for (const qos of [0, 1] as const) {
      const client = await mqttAs(busA);
      client.on('message', (topic, payload) => overMqtt[qos].push({ topic, body: JSON.parse(payload.toString()) as Envelope }));
      assert.deepEqual(
        (await client.subscribeAsync(`tenants/${a.tenantId}/#`, { qos })).map((g) => g.qos),
        [qos],
      );
    }
    await nc.flush();

    const mine = await createPortfolio(a);
    const theirs = await createPortfolio(b);
    await until('the creation event over NATS', () => overNats.some((e) => e.data.id === mine));
    await until('the creation event over MQTT, QoS 0 and 1', () => [0, 1].every((q) => overMqtt[q as 0 | 1].some((m) => m.body.data.id === mine)));
    await sleep(300); // B's events, had they been let through, would have arrived by now
    for (const received of [overMqtt[0], overMqtt[1]]) {
      const event = received.find((m) => m.body.data.id === mine)!;
      assert.equal(event.topic, `tenants/${a.tenantId}/events`);
      assert.equal(`${event.body.subject}.${event.body.action}`, 'portfolios.creation');
      assert.ok(!received.some((m) => m.body.data.id === theirs), "nothing of B's over MQTT");
    }
    assert.ok(!overNats.some((e) => e.data.id === theirs), "nothing of B's over NATS");
    sub.unsubscribe();
  });

  it("keeps MQTT client ids per tenant: B taking A's client id neither drops A's subscriber nor finds A's session", async () => {
    const clientId = `shared-${Math.random().toString(36).slice(2)}`;
    // A's persistent session, with a subscription kept in it: the reconnect finds it.
    const first = await mqttSession(busA, { clientId, clean: false });
    assert.equal(first.sessionPresent, false);
    await first.client.subscribeAsync(`tenants/${a.tenantId}/#`, { qos: 0 });
    await first.client.endAsync();
    const subscriber = await mqttSession(busA, { clientId, clean: false });
    assert.equal(subscriber.sessionPresent, true, "A's session is kept between its connections");
    const toA: Received[] = [];
    subscriber.client.on('message', (topic, payload) => toA.push({ topic, body: JSON.parse(payload.toString()) as Envelope }));
    let aClosed = false;
    subscriber.client.on('close', () => (aClosed = true));

    // B with A's client id: a persistent session and a clean one, each a new session of B's.
    const toB: Received[] = [];
    const persistent = await mqttSession(busB, { clientId, clean: false });
    assert.equal(persistent.sessionPresent, false, "A's session is not revealed to B");
    persistent.client.on('message', (topic, payload) => toB.push({ topic, body: JSON.parse(payload.toString()) as Envelope }));
    await persistent.client.subscribeAsync(`tenants/${b.tenantId}/#`, { qos: 1 });
    const cleanWithAsId = await mqttSession(busB, { clientId, clean: true });
    // It takes over B's own persistent session (same tenant, same id), never A's.
    cleanWithAsId.client.on('message', (topic, payload) => toB.push({ topic, body: JSON.parse(payload.toString()) as Envelope }));
    await cleanWithAsId.client.subscribeAsync(`tenants/${b.tenantId}/#`, { qos: 0 });

    const mine = await createPortfolio(a);
    const theirs = await createPortfolio(b);
    await until("A's event at A's subscriber, after B's connections", () => toA.some((m) => m.body.data.id === mine));
    await until("B's event at B's subscriber", () => toB.some((m) => m.body.data.id === theirs));
    await sleep(300);
    assert.equal(aClosed, false, "A's subscriber is still connected");
    assert.ok(subscriber.client.connected);
    assert.ok(!toB.some((m) => m.body.data.id === mine), "B receives none of A's events");
    assert.ok(!toA.some((m) => m.body.data.id === theirs), "A receives none of B's events");
    assert.ok(toB.every((m) => m.topic === `tenants/${b.tenantId}/events`));

    // A's session outlived B's use of the id: A reconnects to it and its kept subscription delivers.
    await subscriber.client.endAsync();
    const again = await mqttSession(busA, { clientId, clean: false });
    assert.equal(again.sessionPresent, true, "A's session is still A's");
    const afterReconnect: Received[] = [];
    again.client.on('message', (topic, payload) => afterReconnect.push({ topic, body: JSON.parse(payload.toString()) as Envelope }));
    const next = await createPortfolio(a);
    await until("A's next event through the kept subscription", () => afterReconnect.some((m) => m.body.data.id === next));
    await again.client.endAsync();
    // Clean it up, or the session would stay in A's account.
    await (await mqttSession(busA, { clientId, clean: true })).client.endAsync();
  });

  it("refuses A's subscriptions to B's events and to every tenant's, over NATS and MQTT", async () => {
    const nc = await natsAs(busA);
    const others = [`tenants.${b.tenantId}.events`, 'tenants.>', '>', `platform.optimizer.requests.${a.tenantId}`];
    for (const subject of [...others, `services.history.${a.tenantId}`, 'services.history.*']) {
      const received: unknown[] = [];
      let refused: Error | undefined;
      nc.subscribe(subject, { callback: (error, m) => void (error ? (refused = error) : received.push(m)) });
      await nc.flush();
      await until(`the refusal of ${subject}`, () => refused !== undefined, 5000);
      assert.match(refused!.message, /permissions violation/i, subject);
      assert.deepEqual(received, [], subject);
    }
    const client = await mqttAs(busA);
    const received: string[] = [];
    client.on('message', (topic) => received.push(topic));
    for (const qos of [0, 1] as const) {
      const granted = await client
        .subscribeAsync([`tenants/${b.tenantId}/#`, 'tenants/#', '#'], { qos })
        .catch((e: { packet?: { granted: number[] } }) => e.packet?.granted);
      assert.deepEqual(
        (granted as ({ qos: number } | number)[]).map((g) => (typeof g === 'number' ? g : g.qos)),
        [128, 128, 128],
        `QoS ${qos}`,
      );
    }
    await createPortfolio(b);
    await sleep(500);
    assert.deepEqual(received, [], 'no message reached the refused subscriptions');
  });

  it('refuses anything A publishes, over NATS and MQTT: nothing reaches a stream or a subscriber', async () => {
    const before = await messagesIn();
    const watched: string[] = [];
    const watcher = admin.subscribe('>', {
      callback: (_e, m) => void (!m.subject.startsWith('$') && !m.subject.startsWith('_INBOX') && watched.push(m.subject)),
    });
    await admin.flush();

    const nc = await natsAs(busA);
    const errors: string[] = [];
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'error') errors.push(String(s.error));
    })();
    for (const subject of [
      `tenants.${a.tenantId}.events`,
      `tenants.${b.tenantId}.events`,
      `platform.optimizer.requests.${a.tenantId}`,
      'platform.optimizer.results',
      `services.history.${a.tenantId}`,
    ]) {
      nc.publish(subject, JSON.stringify({ forged: true }));
    }
    await nc.flush();
    const client = await mqttAs(busA);
    await client.publishAsync(`tenants/${a.tenantId}/events`, JSON.stringify({ forged: true }), { qos: 0 });
    await client.publishAsync('platform/optimizer/results', JSON.stringify({ forged: true }), { qos: 0 });
    await sleep(500);

    assert.equal(errors.length, 5, `each NATS publish refused: ${errors.join('; ')}`);
    assert.ok(errors.every((e) => /permissions violation/i.test(e)));
    assert.deepEqual(watched, [], 'nothing was delivered');
    assert.deepEqual(await messagesIn(), before, 'no stream stored anything');
    watcher.unsubscribe();
  });

  it('lets the management service ask for a history and the data service answer it, and the data service publish nothing else there', async () => {
    const server = platform.natsServer!;
    const connectAs = async (url: string) => {
      const nc = await connectNats(url, 'bus-test-service', { reconnect: false });
      open.push({ close: () => nc.close().catch(() => undefined) });
      return nc;
    };
    const management = await connectAs(server.serviceUrls.management);
    const data = await connectAs(server.serviceUrls.data);
    const errors: string[] = [];
    void (async () => {
      for await (const s of data.status()) if (s.type === 'error') errors.push(String(s.error));
    })();
    // The running data service answers the request too (it is the same user, in the queue group
    // `history`): every reply is collected on an inbox of the asker's.
    const subject = 'services.history.bus-test';
    let answered = 0;
    data.subscribe(subject, {
      callback: (_e, m) => {
        m.respond(`answer ${++answered}`);
        m.respond('a second answer'); // one reply per request (allow_responses max 1)
      },
    });
    await data.flush();
    const inbox = `_INBOX.bus-test-${Math.random().toString(36).slice(2)}`;
    const replies: string[] = [];
    management.subscribe(inbox, { callback: (_e, m) => void replies.push(m.string()) });
    management.publish(subject, 'question', { reply: inbox });
    await management.flush();
    await until('the answer', () => replies.includes('answer 1'), 5000);
    await sleep(300);
    assert.ok(!replies.includes('a second answer'), replies.join('; '));

    const watched: string[] = [];
    // The services' own traffic (JetStream API answers on their inboxes) goes on meanwhile.
    const ours = (s: string) => !s.startsWith('$') && (!s.startsWith('_INBOX.') || s === '_INBOX.forged');
    const watcher = admin.subscribe('>', { callback: (_e, m) => void (ours(m.subject) && watched.push(m.subject)) });
    await admin.flush();
    for (const forged of [subject, 'services.history.other', `tenants.${a.tenantId}.events`, '_INBOX.forged']) data.publish(forged, 'forged');
    await data.flush();
    await until('the refusals', () => errors.length >= 5, 5000);
    assert.ok(
      errors.every((e) => /permissions violation/i.test(e)),
      errors.join('; '),
    );
    assert.deepEqual(watched, [], 'nothing the data service published unasked was delivered');
    watcher.unsubscribe();
  });

  it(`stops a revoked credential within ${REVOCATION_BOUND_MS} ms: its connections are dropped and new ones refused`, async () => {
    const extra = await createBusCredential(platform.database.db, a.tenantId, 'to revoke');
    const cred = { username: extra.username, password: extra.password };
    await sync.syncNow();
    let nc: NatsConnection | undefined;
    for (let i = 0; !nc; i++) nc = await natsAs(cred).catch(async (error) => (i > 40 ? Promise.reject(error) : sleep(50).then(() => undefined)));
    // MQTT logins wait for the reload to end: one during it can time out (docs/adr/0026-bus-authorization.md).
    await sleep(1500);
    const client = await mqttAs(cred);
    await client.subscribeAsync(`tenants/${a.tenantId}/#`, { qos: 0 });
    let natsClosed = 0;
    let mqttClosed = 0;
    // The server closes the connection of a user that is gone; the client notices it at once.
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'disconnect') natsClosed ||= Date.now();
    })();
    void nc.closed().then(() => (natsClosed ||= Date.now()));
    client.once('close', () => (mqttClosed = Date.now()));

    const revokedAt = Date.now();
    assert.equal(await revokeBusCredential(platform.database.db, extra.id), true);
    // Not synced by hand: the renderer's own interval has to find it.
    await until('both connections dropped', () => natsClosed > 0 && mqttClosed > 0, REVOCATION_BOUND_MS);
    const took = Math.max(natsClosed, mqttClosed) - revokedAt;
    console.log(`      revoked credential dropped after ${took} ms (NATS ${natsClosed - revokedAt} ms, MQTT ${mqttClosed - revokedAt} ms)`);
    assert.ok(took <= REVOCATION_BOUND_MS);
    await assert.rejects(natsAs(cred), /Authorization Violation/i);
    await assert.rejects(mqttAs(cred), /Not authorized/i);
    // The tenant's other credential works on.
    await (await natsAs(busA)).close();
    assert.deepEqual(
      (await listBusCredentials(platform.database.db, a.tenantId)).map((c) => [c.id, c.revoked_at !== null]),
      [
        [busA.username, false],
        [extra.id, true],
      ],
    );
  });

  it("removes a tenant's account with its last credential: its connections are dropped, the others' kept", async () => {
    const c = await platform.tenant();
    const only = await createBusCredential(platform.database.db, c.tenantId);
    const cred = { username: only.username, password: only.password };
    await sync.syncNow();
    let nc: NatsConnection | undefined;
    for (let i = 0; !nc; i++) nc = await natsAs(cred).catch(async (error) => (i > 40 ? Promise.reject(error) : sleep(50).then(() => undefined)));
    await sleep(1500); // as above: not an MQTT login during the reload
    const client = await mqttAs(cred);
    await client.subscribeAsync(`tenants/${c.tenantId}/#`, { qos: 1 });
    let natsDropped = false;
    let mqttDropped = false;
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'disconnect') natsDropped = true;
    })();
    client.once('close', () => (mqttDropped = true));
    const bystander = await mqttAs(busA);
    const toA: string[] = [];
    bystander.on('message', (_topic, payload) => toA.push((JSON.parse(payload.toString()) as Envelope).data.id));
    await bystander.subscribeAsync(`tenants/${a.tenantId}/#`, { qos: 0 });
    let bystanderDropped = false;
    bystander.once('close', () => (bystanderDropped = true));

    assert.equal(await revokeBusCredential(platform.database.db, only.id), true);
    assert.equal(await sync.syncNow(), true, 'the users file changed');
    await until("C's connections dropped", () => natsDropped && mqttDropped);
    await assert.rejects(mqttAs(cred), /Not authorized/i);
    assert.equal(bystanderDropped, false, "A's subscriber stays connected through the reload");
    const mine = await createPortfolio(a);
    await until("A's event after the reload", () => toA.includes(mine));
  });

  it('lists credentials without their password or hash', async () => {
    const listed = await listBusCredentials(platform.database.db, b.tenantId);
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.id, busB.username);
    assert.ok(!JSON.stringify(listed).includes(busB.password) && !JSON.stringify(listed).includes('$2'));
  });
});
