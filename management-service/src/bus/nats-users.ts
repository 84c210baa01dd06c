import { streams, subjects } from '@platform/shared';

/**
 * The accounts and users of the NATS server (and of its MQTT listener), rendered as the `accounts`
 * block its configuration includes (docs/adr/0026-bus-authorization.md): the platform's account and
 * one per tenant. Pure: the caller reads the hashes and credentials, writes the text and makes the
 * server reload it.
 */

export type NatsPermissions = {
  publish: { allow?: string[]; deny?: string[] };
  subscribe: { allow?: string[]; deny?: string[] };
  /**
   * May answer each request it received, once (nats-server's `allow_responses`), on the reply
   * subject the request named and nowhere else: narrower than publishing on `_INBOX.>`.
   */
  allowResponses?: { max: number };
};

export type NatsUser = { user: string; passwordHash: string; permissions?: NatsPermissions };

/** The services' users on the bus; their passwords reach the services in NATS_URL. */
export const SERVICE_USERS = { management: 'management-service', data: 'data-service' } as const;

/** The durable consumer the management service reads results through (its default; docs/adr/0021-optimizations.md). */
const RESULTS_DURABLE = 'management-optimizer-results';

/**
 * The JetStream API a service needs to make sure of the streams (both call ensureStreams at start),
 * their number of replicas included (docs/adr/0051-replicated-streams.md).
 */
const streamApi = Object.values(streams).flatMap((s) => [
  `$JS.API.STREAM.INFO.${s.name}`,
  `$JS.API.STREAM.CREATE.${s.name}`,
  `$JS.API.STREAM.UPDATE.${s.name}`,
]);

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
 * optimizer requests (a subject per tenant) and history requests, and reads optimizer results and (its forwarders, one durable per tenant) the
 * tenant event stream; the data service reads requests and publishes results, and answers history
 * requests (a reply to each, nothing else). Both receive the
 * answers of the JetStream API and of publishes on their inboxes.
 */
export function servicePermissions(service: keyof typeof SERVICE_USERS): NatsPermissions {
  const inbox = { allow: ['_INBOX.>'] };
  if (service === 'management') {
    return {
      publish: {
        allow: [
          subjects.tenantEvents('*'),
          subjects.everyOptimizerRequest,
          subjects.everyHistoryRequest,
          '$JS.API.INFO',
          ...streamApi,
          ...durableConsumerApi(streams.platform.name, RESULTS_DURABLE),
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
  // The optimizer reads each tenant's requests through a durable of its own (optimizer-<tenant>):
  // it may create consumers of the requests' subjects only, and pull from any of the stream's
  // durables but the management service's.
  const platform = streams.platform.name;
  return {
    publish: {
      allow: [
        subjects.optimizerResults,
        '$JS.API.INFO',
        ...streamApi,
        `$JS.API.CONSUMER.CREATE.${platform}.*.${subjects.everyOptimizerRequest}`,
        `$JS.API.CONSUMER.INFO.${platform}.*`,
        `$JS.API.CONSUMER.MSG.NEXT.${platform}.*`,
        `$JS.ACK.${platform}.*.>`,
      ],
      deny: [`$JS.API.CONSUMER.MSG.NEXT.${platform}.${RESULTS_DURABLE}`, `$JS.ACK.${platform}.${RESULTS_DURABLE}.>`],
    },
    // Histories are asked for on services.history.<tenant> and answered to the asker's reply subject.
    subscribe: { allow: [...inbox.allow, subjects.everyHistoryRequest] },
    allowResponses: { max: 1 },
  };
}

/** The account of the services (and of the local admin): the streams and their subjects live there. */
export const PLATFORM_ACCOUNT = 'PLATFORM';

/**
 * A tenant's own account: its subjects, its JetStream (where nats-server keeps the MQTT sessions)
 * and so its MQTT client ids are separate from every other tenant's (docs/adr/0026-bus-authorization.md).
 */
export const tenantAccount = (tenantId: string) => `TENANT_${tenantId}`;

/**
 * A tenant's subscriber, inside its tenant's account: reads its own events, over NATS
 * (`tenants.<tenant>.>`) or MQTT (`tenants/<tenant>/#`, whose `#` also subscribes to the parent
 * `tenants.<tenant>`), publishes nothing. `$MQTT.sub.>` carries MQTT QoS 1 deliveries; it is the
 * account's own, so it holds only this tenant's sessions.
 */
export function tenantPermissions(tenantId: string): NatsPermissions {
  return {
    publish: { deny: ['>'] },
    subscribe: { allow: [`tenants.${tenantId}`, `tenants.${tenantId}.>`, '$MQTT.sub.>'] },
  };
}

/** One account of the server: its users, the streams it lets named accounts import, and the ones it imports. */
export type NatsAccount = {
  name: string;
  users: NatsUser[];
  exports: { stream: string; accounts: string[] }[];
  imports: { account: string; stream: string }[];
};

/** Quoted for the NATS configuration (its strings take JSON's escapes). */
const quote = (value: string) => JSON.stringify(value);
const list = (values: string[]) => `[${values.map(quote).join(', ')}]`;

function renderPermissions(p: NatsPermissions): string {
  const side = (s: { allow?: string[]; deny?: string[] }) =>
    [s.allow ? `allow: ${list(s.allow)}` : undefined, s.deny ? `deny: ${list(s.deny)}` : undefined].filter(Boolean).join(', ');
  const responses = p.allowResponses ? `, allow_responses: { max: ${Math.trunc(p.allowResponses.max)} }` : '';
  return `{ publish: { ${side(p.publish)} }, subscribe: { ${side(p.subscribe)} }${responses} }`;
}

const BCRYPT = /^\$2[abxy]\$\d{2}\$[./A-Za-z0-9]{53}$/;
const USER = /^[A-Za-z0-9_-]{1,64}$/;
const ACCOUNT = /^[A-Za-z][A-Za-z0-9_-]{0,79}$/;
const SUBJECT = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * The text of the users file: an `accounts` block, one line per user, export and import. A user
 * without permissions may do everything in its account (only the local admin of `npm start` and the
 * tests). Refuses anything that is not a bcrypt hash, a plain name or a plain subject, so nothing
 * read from the database can change the file's structure; and a user in two accounts.
 */
export function renderNatsAccounts(accounts: NatsAccount[]): string {
  const users = new Set<string>();
  const names = new Set<string>();
  const lines = accounts.flatMap((a) => {
    if (!ACCOUNT.test(a.name)) throw new Error(`NATS account name ${JSON.stringify(a.name)} is not plain letters, digits, - and _`);
    if (names.has(a.name)) throw new Error(`NATS account ${a.name} appears twice`);
    names.add(a.name);
    for (const s of [...a.exports.map((e) => e.stream), ...a.imports.map((i) => i.stream)]) {
      if (!SUBJECT.test(s)) throw new Error(`NATS subject ${JSON.stringify(s)} of account ${a.name} is not plain tokens`);
    }
    for (const other of [...a.exports.flatMap((e) => e.accounts), ...a.imports.map((i) => i.account)]) {
      if (!ACCOUNT.test(other)) throw new Error(`NATS account name ${JSON.stringify(other)} is not plain letters, digits, - and _`);
    }
    const userLines = a.users.map((u) => {
      if (!USER.test(u.user)) throw new Error(`NATS user name ${JSON.stringify(u.user)} is not plain letters, digits, - and _`);
      if (!BCRYPT.test(u.passwordHash)) throw new Error(`the password of NATS user ${u.user} is not a bcrypt hash`);
      if (users.has(u.user)) throw new Error(`NATS user ${u.user} appears twice`);
      users.add(u.user);
      const permissions = u.permissions ? `, permissions: ${renderPermissions(u.permissions)}` : '';
      return `      { user: ${quote(u.user)}, password: ${quote(u.passwordHash)}${permissions} }`;
    });
    return [
      `  ${quote(a.name)} {`,
      // MQTT keeps its sessions in the account's JetStream; the platform's streams are in its own.
      '    jetstream: enabled',
      '    users = [',
      ...userLines,
      '    ]',
      '    exports = [',
      ...a.exports.map((e) => `      { stream: ${quote(e.stream)}, accounts: ${list(e.accounts)} }`),
      '    ]',
      '    imports = [',
      ...a.imports.map((i) => `      { stream: { account: ${quote(i.account)}, subject: ${quote(i.stream)} } }`),
      '    ]',
      '  }',
    ];
  });
  return ['# Rendered from the database; do not edit (docs/adr/0026-bus-authorization.md).', 'accounts {', ...lines, '}', ''].join('\n');
}

const TENANT_ID = /^[a-z][a-z0-9-]{1,62}$/;

/**
 * The platform's account (the services, the optional local admin, the streams) exporting each
 * tenant's event subject to that tenant's account alone, and one account per tenant with a
 * credential that works, importing its own subject: the only way events cross accounts.
 */
export function busAccounts(input: {
  services: { management: string; data: string };
  admin?: string;
  credentials: { id: string; tenant_id: string; password_hash: string }[];
}): NatsAccount[] {
  const byTenant = new Map<string, NatsUser[]>();
  for (const c of input.credentials) {
    if (!TENANT_ID.test(c.tenant_id)) throw new Error(`tenant id ${JSON.stringify(c.tenant_id)} of bus credential ${c.id} is not a tenant id`);
    const users = byTenant.get(c.tenant_id) ?? [];
    users.push({ user: c.id, passwordHash: c.password_hash, permissions: tenantPermissions(c.tenant_id) });
    byTenant.set(c.tenant_id, users);
  }
  const tenants = [...byTenant.keys()].sort();
  const platform: NatsAccount = {
    name: PLATFORM_ACCOUNT,
    users: [
      { user: SERVICE_USERS.management, passwordHash: input.services.management, permissions: servicePermissions('management') },
      { user: SERVICE_USERS.data, passwordHash: input.services.data, permissions: servicePermissions('data') },
      ...(input.admin ? [{ user: 'admin', passwordHash: input.admin }] : []),
    ],
    exports: tenants.map((t) => ({ stream: subjects.tenantEvents(t), accounts: [tenantAccount(t)] })),
    imports: [],
  };
  return [
    platform,
    ...tenants.map((t) => ({
      name: tenantAccount(t),
      users: byTenant.get(t)!,
      exports: [],
      imports: [{ account: PLATFORM_ACCOUNT, stream: subjects.tenantEvents(t) }],
    })),
  ];
}
