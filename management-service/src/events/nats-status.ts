import type { Logger, NatsConnection } from '@platform/shared';

/**
 * Logs when the service loses NATS and when it is back. NATS is not part of the management
 * service's readiness: while it is away requests are still served and the outbox keeps the events
 * until the relay can publish them, so an operator learns of it from these lines (the server's
 * address only, never its credentials).
 */
export function logNatsStatus(nats: NatsConnection, logger: Logger): void {
  void (async () => {
    for await (const status of nats.status()) {
      if (status.type === 'disconnect') logger.warn('NATS connection lost; events wait in the outbox', { server: status.server });
      else if (status.type === 'reconnect') logger.info('NATS connection back', { server: status.server });
      else if (status.type === 'error') logger.warn('NATS connection error', { error: status.error.message });
    }
  })().catch((error: unknown) => logger.warn('NATS status no longer watched', { error: String(error) }));
}
