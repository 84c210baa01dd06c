import { streams, subjects } from '@platform/shared';

/**
 * The users of the NATS server (and of its MQTT listener), rendered as the `users` list of its
 * `authorization` block (docs/adr/0026-bus-authorization.md). Pure: the caller reads the hashes and
 * credentials, writes the text and makes the server reload it.
 */

export type NatsPermissions = {
  publish: { allow?: string[]; deny?: string[] };
  subscribe: { allow?: string[]; deny?: string[] };
};

export type NatsUser = { user: string; passwordHash: string; permissions?: NatsPermissions };

/** The services' users on the bus; their passwords reach the services in NATS_URL. */
export const SERVICE_USERS = { management: 'management-service', data: 'data-service' } as const;

/** The durable consumers the services read through (their defaults; docs/adr/0021-optimizations.md). */
const DURABLES = { managementResults: 'management-optimizer-results', optimizer: 'optimizer' } as const;

/** The JetStream API a service needs to make sure of the streams (both call ensureStreams at start). */
const streamApi = Object.values(streams).flatMap((s) => [`$JS.API.STREAM.INFO.${s.name}`, `$JS.API.STREAM.CREATE.${s.name}`]);

/** Create (both request forms), look up and pull from one durable consumer, and acknowledge its messages. */
function durableConsumerApi(stream: string, durable: string): string[] {
  return [
    `$JS.API.CONSUMER.CREATE.${stream}.${durable}`,
    `$JS.API.CONSUMER.CREATE.${stream}.${durable}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${durable}`,
    `$JS.API.CONSUMER.INFO.${stream}.${durable}`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`,
    `$JS.ACK.${stream}.${durable}.>`,
  ];
}

/**
 * What each service may do, and nothing more: the management service publishes tenant events and
 * optimizer requests and reads optimizer results and (its forwarders, one durable per tenant) the
 * tenant event stream; the data service reads requests and publishes results. Both receive the
 * answers of the JetStream API and of publishes on their inboxes.
 */
export function servicePermissions(service: keyof typeof SERVICE_USERS): NatsPermissions {
  const inbox = { allow: ['_INBOX.>'] };
  if (service === 'management') {
    return {
      publish: {
        allow: [
          subjects.tenantEvents('*'),
          subjects.optimizerRequests,
          '$JS.API.INFO',
          ...streamApi,
          ...durableConsumerApi(streams.platform.name, DURABLES.managementResults),
          // The forwarders' consumers are named after their tenants (forward-<tenant>).
          `$JS.API.CONSUMER.CREATE.${streams.tenantEvents.name}.>`,
          `$JS.API.CONSUMER.DURABLE.CREATE.${streams.tenantEvents.name}.*`,
          `$JS.API.CONSUMER.INFO.${streams.tenantEvents.name}.*`,
          `$JS.API.CONSUMER.MSG.NEXT.${streams.tenantEvents.name}.*`,
          `$JS.ACK.${streams.tenantEvents.name}.>`,
        ],
      },
      subscribe: inbox,
    };
  }
  return {
    publish: {
      allow: [subjects.optimizerResults, '$JS.API.INFO', ...streamApi, ...durableConsumerApi(streams.platform.name, DURABLES.optimizer)],
    },
    subscribe: inbox,
  };
}

/**
 * A tenant's subscriber: reads its own events, over NATS (`tenants.<tenant>.>`) or MQTT
 * (`tenants/<tenant>/#`, whose `#` also subscribes to the parent `tenants.<tenant>`), publishes
 * nothing. MQTT QoS 1 subscriptions would also need `$MQTT.sub.>`, which every MQTT session of the
 * server shares: granting it would let one tenant read another's QoS 1 deliveries, so MQTT
 * subscribers use QoS 0 (docs/adr/0026-bus-authorization.md).
 */
export function tenantPermissions(tenantId: string): NatsPermissions {
  return {
    publish: { deny: ['>'] },
    subscribe: { allow: [`tenants.${tenantId}`, `tenants.${tenantId}.>`] },
  };
}

/** Quoted for the NATS configuration (its strings take JSON's escapes). */
const quote = (value: string) => JSON.stringify(value);

function renderPermissions(p: NatsPermissions): string {
  const side = (s: { allow?: string[]; deny?: string[] }) =>
    [s.allow ? `allow: [${s.allow.map(quote).join(', ')}]` : undefined, s.deny ? `deny: [${s.deny.map(quote).join(', ')}]` : undefined]
      .filter(Boolean)
      .join(', ');
  return `{ publish: { ${side(p.publish)} }, subscribe: { ${side(p.subscribe)} } }`;
}

const BCRYPT = /^\$2[abxy]\$\d{2}\$[./A-Za-z0-9]{53}$/;
const USER = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The text of the users file: one line per user. A user without permissions may do everything
 * (only the local admin of `npm start` and the tests). Refuses anything that is not a bcrypt hash
 * or a plain user name, so nothing read from the database can change the file's structure.
 */
export function renderNatsUsers(users: NatsUser[]): string {
  const seen = new Set<string>();
  const lines = users.map((u) => {
    if (!USER.test(u.user)) throw new Error(`NATS user name ${JSON.stringify(u.user)} is not plain letters, digits, - and _`);
    if (!BCRYPT.test(u.passwordHash)) throw new Error(`the password of NATS user ${u.user} is not a bcrypt hash`);
    if (seen.has(u.user)) throw new Error(`NATS user ${u.user} appears twice`);
    seen.add(u.user);
    const permissions = u.permissions ? `, permissions: ${renderPermissions(u.permissions)}` : '';
    return `  { user: ${quote(u.user)}, password: ${quote(u.passwordHash)}${permissions} }`;
  });
  return ['# Rendered from the database; do not edit (docs/adr/0026-bus-authorization.md).', 'users = [', ...lines, ']', ''].join('\n');
}

/** The service users, the optional local admin and every tenant credential that works. */
export function busUsers(input: {
  services: { management: string; data: string };
  admin?: string;
  credentials: { id: string; tenant_id: string; password_hash: string }[];
}): NatsUser[] {
  return [
    { user: SERVICE_USERS.management, passwordHash: input.services.management, permissions: servicePermissions('management') },
    { user: SERVICE_USERS.data, passwordHash: input.services.data, permissions: servicePermissions('data') },
    ...(input.admin ? [{ user: 'admin', passwordHash: input.admin }] : []),
    ...input.credentials.map((c) => ({ user: c.id, passwordHash: c.password_hash, permissions: tenantPermissions(c.tenant_id) })),
  ];
}
