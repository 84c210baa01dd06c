import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';

export type { NatsConnection };
export { AckPolicy, DeliverPolicy, jetstream, jetstreamManager };
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';

/** Subjects of contracts/events.asyncapi.yaml. */
export const subjects = {
  tenantEvents: (tenantId: string) => `tenants.${tenantId}.events`,
  /** One subject per tenant, so that the optimizer reads each tenant's requests through a consumer of its own. */
  optimizerRequests: (tenantId: string) => `platform.optimizer.requests.${tenantId}`,
  /** Every tenant's optimizer requests. */
  everyOptimizerRequest: 'platform.optimizer.requests.*',
  optimizerResults: 'platform.optimizer.results',
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
    servers: fromUrl.server,
    name,
    maxReconnectAttempts,
    reconnectTimeWait: 1000,
    ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    ...(user ? { user, pass } : {}),
  });
}

/** The server address without its credentials, and the credentials (URL-decoded). */
export function natsCredentials(url: string): { server: string; user?: string; pass?: string } {
  const parsed = new URL(url);
  if (!parsed.username) return { server: url };
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  parsed.username = '';
  parsed.password = '';
  return { server: parsed.toString().replace(/\/$/, ''), user, pass };
}

/** Creates the streams when missing; safe to call from every replica at start. */
export async function ensureStreams(nc: NatsConnection): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const stream of Object.values(streams)) {
    try {
      await jsm.streams.info(stream.name);
    } catch {
      await jsm.streams.add({ name: stream.name, subjects: [...stream.subjects], max_age: nanos(stream.maxAgeMs) });
    }
  }
}

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
