import { connect, headers as natsHeaders, nanos, type Msg, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from './logger.ts';

export type { Msg as NatsMsg, NatsConnection };
export { natsHeaders };
export { AckPolicy, DeliverPolicy, jetstream, jetstreamManager };
import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, type ClusterInfo } from '@nats-io/jetstream';

/** Subjects of contracts/events.asyncapi.yaml. */
export const subjects = {
  tenantEvents: (tenantId: string) => `tenants.${tenantId}.events`,
  /** One subject per tenant, so that the optimizer reads each tenant's requests through a consumer of its own. */
  optimizerRequests: (tenantId: string) => `platform.optimizer.requests.${tenantId}`,
  /** Every tenant's optimizer requests. */
  everyOptimizerRequest: 'platform.optimizer.requests.*',
  optimizerResults: 'platform.optimizer.results',
  /**
   * Core NATS request/reply, outside every stream: a history is asked for while a client waits and
   * is worth nothing later, so nothing keeps it (docs/adr/0058-portfolio-history.md).
   */
  historyRequests: (tenantId: string) => `services.history.${tenantId}`,
  /** Every tenant's history requests. */
  everyHistoryRequest: 'services.history.*',
} as const;

const DAY_MS = 86_400_000;

/**
 * Streams: one for every tenant's outbound events, one for the services' internal messages.
 * Both keep messages on disk for a week (consumers that fall further behind re-read the outbox).
 */
export const streams = {
  tenantEvents: { name: 'TENANT_EVENTS', subjects: ['tenants.*.events'], maxAgeMs: 7 * DAY_MS },
  platform: { name: 'PLATFORM', subjects: ['platform.>'], maxAgeMs: 7 * DAY_MS },
} as const;

/**
 * Connects and stays connected (unless `reconnect: false`), logging in with `options.user` when
 * given, else with the user and password the URL carries (`nats://user:password@host:4222`; docs/adr/0026-bus-authorization.md).
 * The URL may list the servers of a cluster, comma-separated (`nats://user:password@10.0.0.1:4222,10.0.0.2:4222`):
 * the client connects to any of them and moves to another when its server goes away.
 */
export async function connectNats(
  url: string,
  name: string,
  options: { user?: string; pass?: string; reconnect?: boolean; timeoutMs?: number } = {},
): Promise<NatsConnection> {
  const fromUrl = natsCredentials(url);
  const user = options.user ?? fromUrl.user;
  const pass = options.user ? options.pass : fromUrl.pass;
  const maxReconnectAttempts = options.reconnect === false ? 0 : -1;
  return connect({
    servers: fromUrl.servers,
    name,
    maxReconnectAttempts,
    reconnectTimeWait: 1000,
    ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    ...(user ? { user, pass } : {}),
  });
}

/**
 * The servers of a NATS URL without credentials (the first one's scheme given to the others that
 * are bare `host:port`), and the credentials of its first server (URL-decoded).
 */
export function natsCredentials(url: string): { servers: string[]; user?: string; pass?: string } {
  const [first, ...others] = url.split(',').map((part) => part.trim());
  const parsed = new URL(first!);
  const rest = others.map((other) => bareServer(other.includes('://') ? other : `${parsed.protocol}//${other}`));
  if (!parsed.username) return { servers: [bareServer(first!), ...rest] };
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  return { servers: [bareServer(first!), ...rest], user, pass };
}

function bareServer(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString().replace(/\/$/, '');
}

/**
 * Creates the streams when missing; safe to call from every replica at start. With `replicas`
 * (NATS_STREAM_REPLICAS), streams are created with that many copies and an existing stream with
 * another number is changed to it (docs/adr/0051-replicated-streams.md); its durable consumers
 * follow, as they are made without a replica count of their own. Without it (a worker making sure
 * of its stream) an existing stream is left as it is.
 */
export async function ensureStreams(nc: NatsConnection, options: { replicas?: number; logger?: Logger } = {}): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const stream of Object.values(streams)) {
    let info = await jsm.streams.info(stream.name).catch(notFound);
    if (!info) {
      const config = { name: stream.name, subjects: [...stream.subjects], max_age: nanos(stream.maxAgeMs) };
      const created = await jsm.streams
        .add({ ...config, ...(options.replicas ? { num_replicas: options.replicas } : {}) })
        .catch(alreadyMade)
        .catch(replicasRefused(stream.name, options.replicas));
      if (created) {
        options.logger?.info('stream created', { stream: stream.name, replicas: created.config.num_replicas });
        continue;
      }
      info = await jsm.streams.info(stream.name); // another replica made it meanwhile
    }
    const before = info.config.num_replicas;
    if (options.replicas === undefined || before === options.replicas) continue;
    await jsm.streams.update(stream.name, { num_replicas: options.replicas }).catch(replicasRefused(stream.name, options.replicas));
    const waitedMs = await settled(() => jsm.streams.info(stream.name), options.replicas);
    options.logger?.info('stream replicas changed', { stream: stream.name, from: before, to: options.replicas, settled_ms: waitedMs });
  }
}

/**
 * Waits until the stream has a leader and every other replica is current: while JetStream moves a
 * stream to more servers, its publishes get no answer for a moment, and a service that starts
 * publishing then would see its first messages fail. Gives up after 30 s (the stream still works
 * once it settles). Returns the time waited.
 */
async function settled(info: () => Promise<{ cluster?: ClusterInfo }>, replicas: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < 30_000) {
    const cluster = (await info().catch(() => undefined))?.cluster;
    const peers = cluster?.replicas ?? [];
    if (cluster?.leader && peers.length === replicas - 1 && peers.every((p) => p.current && !p.offline)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}

/** Undefined for a stream that does not exist; any other failure (no JetStream leader, no answer) stops the start. */
function notFound(error: unknown): undefined {
  if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return undefined;
  throw error;
}

/** Undefined when the stream was made by another replica between the look-up and the creation. */
function alreadyMade(error: unknown): undefined {
  if (error instanceof JetStreamApiError && error.code === STREAM_NAME_IN_USE) return undefined;
  throw error;
}

/** A refusal of more copies than the servers can hold (a single server, a smaller cluster), said with its fix. */
function replicasRefused(stream: string, replicas: number | undefined) {
  return (error: unknown): never => {
    if (!replicas || replicas === 1 || !(error instanceof JetStreamApiError) || !REPLICAS_REFUSED.includes(error.code)) throw error;
    const fix = 'set NATS_STREAM_REPLICAS to at most the number of NATS servers with JetStream (1 for a single server)';
    throw new Error(`NATS refused ${replicas} replicas of the stream ${stream} (${error.message}): ${fix}`, { cause: error });
  };
}

/**
 * JetStream's error codes for too many copies: replicas on a server outside a cluster, no servers
 * enough to place them, not resources enough.
 */
const REPLICAS_REFUSED = [10074, 10005, 10023];

/** JetStream's error code for "stream name already in use with a different configuration". */
const STREAM_NAME_IN_USE = 10058;

/** Round trip to the server: true when NATS answers within the timeout. */
export async function natsAnswers(nc: NatsConnection, timeoutMs = 2000): Promise<boolean> {
  if (nc.isClosed()) return false;
  try {
    await Promise.race([nc.flush(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs))]);
    return true;
  } catch {
    return false;
  }
}
