import { mqttLogin } from './mqtt-login.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNats, createLogger, durableConsumer, ensureStreams, jetstream, jetstreamManager, streams, type NatsConnection } from '@platform/shared';
import { startNatsCluster, type NatsCluster } from '@platform/dev-stack/nats-cluster';
import { waitFor } from '@platform/dev-stack/ports';

// Three real nats-server processes in one cluster; the streams are the platform's own (shared/src/nats.ts).

/** A logger of createLogger whose lines are kept, to read what ensureStreams said. */
function keptLogger() {
  const logger = createLogger('test', 'info');
  // Silent transports: the lines still pass through the logger's stream, where they are kept.
  for (const transport of logger.transports) transport.silent = true;
  const lines: { message: string; [key: string]: unknown }[] = [];
  logger.on('data', (line: { message: string }) => lines.push(line));
  return { logger, lines };
}

/** Deletes the streams, waiting up to 30 s for JetStream to answer: after a test's kills the cluster may still be electing its leaders. */
async function deleteStreams(nc: NatsConnection) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const jsm = await jetstreamManager(nc);
      for (const stream of Object.values(streams)) await jsm.streams.delete(stream.name).catch(() => undefined);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

describe('dev stack: a three-node NATS cluster and replicated streams', function () {
  this.timeout(90_000);
  let dir: string;
  let cluster: NatsCluster;
  let nc: NatsConnection;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nats-cluster-'));
    cluster = await startNatsCluster({ dir, nodes: 3, mqtt: true, log: () => undefined });
    nc = await connectNats(cluster.url, 'cluster-test');
  });
  after(async () => {
    await nc?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => deleteStreams(nc));
  // A node a failed test left killed is started again, so that the next test has three.
  afterEach(async () => {
    for (const node of cluster.nodes) if (!node.running()) await node.restart();
  });

  it('starts three nodes agreeing on a JetStream meta leader, the client URL listing each of them', async () => {
    assert.equal(cluster.nodes.length, 3);
    assert.ok(cluster.nodes.every((n) => n.running() && n.mqttUrl?.startsWith('mqtt://127.0.0.1:')));
    for (const node of cluster.nodes) assert.ok(cluster.url.includes(`127.0.0.1:${node.port}`), `${cluster.url} lists ${node.port}`);
    assert.ok(cluster.nodes.some((n) => n.name === 'platform-' + '1'));
    const leader = await cluster.metaLeader();
    assert.ok(cluster.nodes.map((n) => n.name).includes(leader));
  });

  it("takes MQTT logins on every node with the platform's users, and refuses a wrong password", async () => {
    const admin = new URL(cluster.url.split(',')[0]!);
    for (const node of cluster.nodes) {
      assert.equal(await mqttLogin(node.mqttUrl!, 'admin', decodeURIComponent(admin.password)), 0, node.name);
      assert.equal(await mqttLogin(node.mqttUrl!, 'admin', 'not-the-password'), 5, node.name);
    }
  });

  it('ensureStreams with 3 replicas makes every stream R3 on three nodes, and a durable made without a count follows it', async () => {
    await ensureStreams(nc, { replicas: 3 });
    const jsm = await jetstreamManager(nc);
    for (const stream of Object.values(streams)) {
      const info = await jsm.streams.info(stream.name);
      assert.equal(info.config.num_replicas, 3, stream.name);
      const names = [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)].sort();
      assert.deepEqual(names, cluster.nodes.map((n) => n.name).sort(), stream.name);
    }
    await durableConsumer(nc, { stream: streams.platform.name, subject: 'platform.test.>', durable: 'follows', ackWaitMs: 5000 });
    const consumer = await jsm.consumers.info(streams.platform.name, 'follows');
    assert.equal(consumer.cluster?.replicas?.length, 2, 'a leader and two replicas');
  });

  it('changes a stream made with 1 replica to 3 at the next start, logs it, and keeps its messages and durables', async () => {
    await ensureStreams(nc, { replicas: 1 });
    const jsm = await jetstreamManager(nc);
    await durableConsumer(nc, { stream: streams.platform.name, subject: 'platform.test.>', durable: 'follows', ackWaitMs: 5000 });
    const js = jetstream(nc);
    for (let i = 0; i < 5; i++) await js.publish('platform.test.before', JSON.stringify({ i }));
    assert.equal((await jsm.streams.info(streams.platform.name)).config.num_replicas, 1);

    const { logger, lines } = keptLogger();
    await ensureStreams(nc, { replicas: 3, logger });
    for (const stream of Object.values(streams)) {
      const info = await jsm.streams.info(stream.name);
      assert.equal(info.config.num_replicas, 3, stream.name);
      const changed = lines.find((l) => l.message === 'stream replicas changed' && l.stream === stream.name);
      assert.deepEqual({ from: changed?.from, to: changed?.to }, { from: 1, to: 3 });
    }
    assert.equal((await jsm.streams.info(streams.platform.name)).state.messages, 5);
    // The durable, made without a replica count, is moved to three nodes with its stream.
    await waitFor('the durable on three nodes', async () => {
      const consumer = await jsm.consumers.info(streams.platform.name, 'follows');
      assert.equal(consumer.cluster?.replicas?.length, 2);
    });

    const again = keptLogger();
    await ensureStreams(nc, { replicas: 3, logger: again.logger });
    assert.deepEqual(again.lines, [], 'nothing to change the second time');
  });

  it("lets each service's own bus user change the streams' replicas, as both do at start", async () => {
    await ensureStreams(nc, { replicas: 1 });
    const jsm = await jetstreamManager(nc);
    for (const [service, replicas] of [
      ['management', 3],
      ['data', 2],
    ] as const) {
      const own = await connectNats(cluster.serviceUrls[service], `${service}-service`);
      try {
        await ensureStreams(own, { replicas });
      } finally {
        await own.close();
      }
      for (const stream of Object.values(streams))
        assert.equal((await jsm.streams.info(stream.name)).config.num_replicas, replicas, `${service}: ${stream.name}`);
    }
  });

  it('loses nothing acknowledged when the stream leader is killed; the node rejoins and catches up', async () => {
    await ensureStreams(nc, { replicas: 3 });
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    const acknowledged = new Set<number>();
    /**
     * Publishes until acknowledged, for up to 30 s: a publish during an election (4–9 s in
     * nats-server 2.9) times out or finds no responders; the message id keeps a repeat single.
     */
    const publish = async (i: number) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          await js.publish('platform.test.chaos', JSON.stringify({ i }), { msgID: `chaos-${i}`, timeout: 2000 });
          acknowledged.add(i);
          return;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };
    for (let i = 0; i < 50; i++) await publish(i);
    // The durable exists before the crash, as a service's does; its leader moves with the stream's.
    const consumer = await durableConsumer(nc, { stream: streams.platform.name, subject: 'platform.test.chaos', durable: 'chaos', ackWaitMs: 5000 });
    const read = new Set<number>();
    /** Reads and acknowledges until `count` messages were read; a pull during an election may fail or come back empty. */
    const readUntil = async (count: number) => {
      const deadline = Date.now() + 30_000;
      while (read.size < count && Date.now() < deadline) {
        try {
          for await (const message of await consumer.fetch({ max_messages: 100, expires: 1000 })) {
            read.add((message.json() as { i: number }).i);
            message.ack();
          }
        } catch {
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };
    await readUntil(25);

    /** The stream's state, asked again while the cluster elects a leader (the request then times out). */
    const streamInfo = async () => {
      let info: Awaited<ReturnType<typeof jsm.streams.info>> | undefined;
      await waitFor('the stream info', async () => (info = await jsm.streams.info(streams.platform.name)));
      return info!;
    };
    const missing = () => [...acknowledged].filter((i) => !read.has(i));
    const nodeNamed = (name: string | undefined) => {
      const node = cluster.nodes.find((n) => n.name === name);
      assert.ok(node, `${name} is a node of the cluster`);
      return node;
    };

    const first = nodeNamed((await streamInfo()).cluster?.leader);
    const killedAt = performance.now();
    await first.kill();
    assert.equal(first.running(), false);
    await publish(50);
    console.log(`      stream leader ${first.name} killed: next acknowledged publish after ${Math.round(performance.now() - killedAt)} ms`);
    for (let i = 51; i < 100; i++) await publish(i);
    const afterFirst = await streamInfo();
    assert.notEqual(afterFirst.cluster?.leader, first.name, 'another node leads the stream');
    assert.equal(afterFirst.state.messages, 100);
    await readUntil(acknowledged.size);
    assert.deepEqual(missing(), [], 'every acknowledged message is read');

    // Restarted, the node rejoins; then the node that leads now is killed, so that the stream goes
    // on only with the restarted node in its majority, and serves every message it acknowledged.
    await first.restart();
    await waitFor(`${first.name} among the stream's replicas again`, async () => {
      const peer = (await jsm.streams.info(streams.platform.name)).cluster?.replicas?.find((r) => r.name === first.name);
      assert.ok(peer?.current && !peer.offline, JSON.stringify(peer));
    });
    const second = nodeNamed((await streamInfo()).cluster?.leader);
    const secondKilledAt = performance.now();
    await second.kill();
    await publish(100);
    console.log(`      then ${second.name} killed: next acknowledged publish after ${Math.round(performance.now() - secondKilledAt)} ms`);
    for (let i = 101; i < 110; i++) await publish(i);
    const afterSecond = await streamInfo();
    assert.notEqual(afterSecond.cluster?.leader, second.name);
    assert.equal(afterSecond.state.messages, 110);
    for (let seq = 1; seq <= 110; seq++) {
      const stored = await jsm.streams.getMessage(streams.platform.name, { seq });
      assert.equal((stored?.json() as { i: number }).i, seq - 1, `message ${seq} served by ${afterSecond.cluster?.leader}`);
    }
    await readUntil(acknowledged.size);
    assert.deepEqual(missing(), [], 'every acknowledged message is read');
  });

  it('refuses more replicas than a single nats-server holds, saying which setting to change, and changes no stream', async () => {
    const url = process.env.NATS_URL;
    if (!url) throw new Error('NATS_URL is not set: run the tests with `npm test`');
    const single = await connectNats(url, 'single-server-test');
    try {
      const jsm = await jetstreamManager(single);
      const look = () =>
        Promise.all(
          Object.values(streams).map((s) =>
            jsm.streams.info(s.name).then(
              (i) => i.config.num_replicas,
              () => 'absent',
            ),
          ),
        );
      const before = await look();
      await assert.rejects(ensureStreams(single, { replicas: 3 }), /^Error: NATS refused 3 replicas of the stream \w+ .*: set NATS_STREAM_REPLICAS to at most/);
      assert.deepEqual(await look(), before);
      assert.ok(before.every((r) => r === 1 || r === 'absent'));
    } finally {
      await single.close();
    }
  });
});
