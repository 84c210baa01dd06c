import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNats, createLogger, durableConsumer, ensureStreams, jetstream, jetstreamManager, streams, type NatsConnection } from '@platform/shared';
import { startNatsCluster, type NatsCluster, type NatsClusterNode } from '@platform/dev-stack/nats-cluster';
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

/** This node's own copy of a stream, as its monitoring listener shows it. */
async function nodeCopy(node: NatsClusterNode, stream: string): Promise<{ messages: number; last_seq: number } | undefined> {
  const response = await fetch(`${node.monitorUrl}/jsz?accounts=true&streams=true`);
  const body = (await response.json()) as { account_details?: { stream_detail?: { name: string; state: { messages: number; last_seq: number } }[] }[] };
  const details = (body.account_details ?? []).flatMap((a) => a.stream_detail ?? []);
  return details.find((d) => d.name === stream)?.state;
}

async function deleteStreams(nc: NatsConnection) {
  const jsm = await jetstreamManager(nc);
  for (const stream of Object.values(streams)) await jsm.streams.delete(stream.name).catch(() => undefined);
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

  it('starts three nodes agreeing on a JetStream meta leader, the client URL listing each of them', async () => {
    assert.equal(cluster.nodes.length, 3);
    assert.ok(cluster.nodes.every((n) => n.running() && n.mqttUrl?.startsWith('mqtt://127.0.0.1:')));
    for (const node of cluster.nodes) assert.ok(cluster.url.includes(`127.0.0.1:${node.port}`), `${cluster.url} lists ${node.port}`);
    assert.ok(cluster.nodes.some((n) => n.name === 'platform-' + '1'));
    const leader = await cluster.metaLeader();
    assert.ok(cluster.nodes.map((n) => n.name).includes(leader));
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

  it('loses nothing acknowledged when the stream leader is killed; the node rejoins and catches up', async () => {
    await ensureStreams(nc, { replicas: 3 });
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    const acknowledged = new Set<number>();
    /** Publishes until acknowledged: a publish during the election may time out; the message id makes a repeat stored once. */
    const publish = async (i: number) => {
      for (let attempt = 0; ; attempt++) {
        try {
          await js.publish('platform.test.chaos', JSON.stringify({ i }), { msgID: `chaos-${i}`, timeout: 2000 });
          acknowledged.add(i);
          return;
        } catch (error) {
          if (attempt >= 30) throw error;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };
    for (let i = 0; i < 50; i++) await publish(i);

    const leaderName = (await jsm.streams.info(streams.platform.name)).cluster?.leader;
    const leader = cluster.nodes.find((n) => n.name === leaderName);
    assert.ok(leader, `the stream leader ${leaderName} is a node of the cluster`);
    const killedAt = performance.now();
    await leader.kill();
    assert.equal(leader.running(), false);
    await publish(50);
    console.log(`      stream leader ${leader.name} killed: next acknowledged publish after ${Math.round(performance.now() - killedAt)} ms`);
    for (let i = 51; i < 100; i++) await publish(i);

    const info = await jsm.streams.info(streams.platform.name);
    assert.notEqual(info.cluster?.leader, leader.name, 'another node leads the stream');
    assert.equal(info.state.messages, 100);

    const consumer = await durableConsumer(nc, { stream: streams.platform.name, subject: 'platform.test.chaos', durable: 'chaos', ackWaitMs: 5000 });
    const read = new Set<number>();
    while (read.size < acknowledged.size) {
      const batch = await consumer.fetch({ max_messages: 100, expires: 2000 });
      let got = 0;
      for await (const message of batch) {
        read.add((message.json() as { i: number }).i);
        message.ack();
        got++;
      }
      if (got === 0) break;
    }
    assert.deepEqual(
      [...acknowledged].filter((i) => !read.has(i)),
      [],
      'every acknowledged message is read',
    );

    await leader.restart();
    await waitFor('the restarted node caught up', async () => {
      const copy = await nodeCopy(leader, streams.platform.name);
      assert.equal(copy?.messages, 100);
      const peer = (await jsm.streams.info(streams.platform.name)).cluster?.replicas?.find((r) => r.name === leader.name);
      assert.ok(peer?.current && !peer.offline, `${leader.name} is current`);
    });
    assert.equal((await nodeCopy(leader, streams.platform.name))?.last_seq, info.state.last_seq);
  });
});
