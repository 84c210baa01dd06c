import type { Knex } from 'knex';
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import mqtt, { type MqttClient } from 'mqtt';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, streams, subjects, type Logger, type NatsConnection } from '@platform/shared';
import { listDestinations, type Destination } from '../store/destinations.ts';

type Forwarder = { destination: Destination; stop: () => Promise<void> };

/** Deliveries counted by destination kind (docs/adr/0024-observability.md). */
export type ForwardingMetrics = { delivered: (kind: string) => void; failed: (kind: string) => void };

type ForwarderOptions = { nats: NatsConnection; logger: Logger; metrics?: ForwardingMetrics };

/**
 * Forwards each tenant's events from JetStream to the tenant's own broker (docs/adr/0012-outbound-events.md): one
 * durable consumer and one loop per tenant, so a broken destination delays only its own tenant.
 * A message is acknowledged to JetStream only once the broker has acknowledged it (MQTT QoS 1), so
 * delivery is at least once; one message at a time keeps the order of the stream.
 */
export async function startForwarders(options: ForwarderOptions & { db: Knex; refreshMs?: number }): Promise<{ stop: () => Promise<void> }> {
  const running = new Map<string, Forwarder>();
  let stopped = false;

  const refresh = async () => {
    const wanted = new Map((await listDestinations(options.db)).map((d) => [d.tenant_id, d]));
    for (const [tenant, forwarder] of running) {
      const next = wanted.get(tenant);
      if (!next || next.updated_at.getTime() !== forwarder.destination.updated_at.getTime()) {
        running.delete(tenant);
        await forwarder.stop();
      }
    }
    for (const [tenant, destination] of wanted) {
      if (!running.has(tenant)) running.set(tenant, await forwardTenant(destination, options));
    }
  };

  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      await refresh();
    } catch (error) {
      options.logger.warn('event destinations could not be refreshed', { error: (error as Error).message });
    }
    // tick never rejects: refresh failures are logged above.
    if (!stopped) timer = setTimeout(() => void tick(), options.refreshMs ?? 5000);
  };
  await tick();

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await Promise.all([...running.values()].map((f) => f.stop()));
      running.clear();
    },
  };
}

async function forwardTenant(destination: Destination, options: ForwarderOptions): Promise<Forwarder> {
  const tenant = destination.tenant_id;
  const log = options.logger.child({ tenant, destination: destination.kind });
  const name = `forward-${tenant}`;
  const jsm = await jetstreamManager(options.nats);
  await jsm.consumers
    .add(streams.tenantEvents.name, {
      durable_name: name,
      filter_subject: subjects.tenantEvents(tenant),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      max_ack_pending: 1,
      ack_wait: 30_000_000_000,
    })
    .catch(() => undefined); // it exists already: the durable consumer remembers where it stopped
  const consumer = await jetstream(options.nats).consumers.get(streams.tenantEvents.name, name);

  const sender = createSender(destination);
  let running = true;
  let failures = 0;

  const loop = (async () => {
    while (running) {
      // While NATS is away, next() fails at once: wait a moment instead of spinning.
      const message = await consumer.next({ expires: 2000 }).catch(async () => {
        await new Promise((r) => setTimeout(r, 1000));
        return null;
      });
      if (!message) continue;
      try {
        await sender.send(message.data, message.headers?.get('Nats-Msg-Id') ?? '');
        message.ack();
        options.metrics?.delivered(destination.kind);
        failures = 0;
      } catch (error) {
        failures++;
        options.metrics?.failed(destination.kind);
        const delay = Math.min(30_000, 500 * 2 ** Math.min(failures - 1, 6));
        log.warn('event destination failed; retrying', { error: (error as Error).message, failures, retry_in_ms: delay });
        await sender.reset();
        message.nak(delay);
        await new Promise((r) => setTimeout(r, Math.min(delay, 1000)));
      }
    }
  })();

  return {
    destination,
    stop: async () => {
      running = false;
      await loop;
      await sender.reset();
    },
  };
}

type Sender = { send: (payload: Uint8Array, messageId: string) => Promise<void>; reset: () => Promise<void> };

/** Delivery to one destination; `send` resolves only once the broker has acknowledged the message. */
function createSender(destination: Destination): Sender {
  const clientId = `platform-${destination.tenant_id}-${process.pid}`;
  if (destination.kind === 'mqtt') {
    let client: MqttClient | undefined;
    return {
      send: async (payload) => {
        // A client whose broker went away is replaced, never waited on: mqtt.js would queue for ever.
        if (client && !client.connected) {
          client.end(true);
          client = undefined;
        }
        client ??= await mqtt.connectAsync(destination.url, { reconnectPeriod: 0, connectTimeout: 5000, clientId });
        await withTimeout(client.publishAsync(destination.topic, Buffer.from(payload), { qos: 1 }), 10_000, 'the broker did not acknowledge within 10 s');
      },
      reset: async () => {
        client?.end(true);
        client = undefined;
      },
    };
  }
  let connection: ChannelModel | undefined;
  let channel: ConfirmChannel | undefined;
  const reset = async () => {
    const c = connection;
    connection = undefined;
    channel = undefined;
    await c?.close().catch(() => undefined);
  };
  return {
    send: async (payload, messageId) => {
      if (!channel) {
        connection = await amqp.connect(destination.url, { timeout: 5000, clientProperties: { connection_name: clientId } });
        connection.on('error', () => undefined);
        connection.on('close', () => {
          connection = undefined;
          channel = undefined;
        });
        channel = await connection.createConfirmChannel();
        channel.on('error', () => undefined);
      }
      channel.publish(destination.exchange, destination.routing_key, Buffer.from(payload), { persistent: true, contentType: 'application/json', messageId });
      await withTimeout(channel.waitForConfirms(), 10_000, 'the broker did not confirm within 10 s');
    },
    reset,
  };
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
