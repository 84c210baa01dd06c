/** What a subscriber to a tenant's events needs of `npm start`'s credentials file (or `npm run topology`'s topology.json). */
export type SubscriberCredentials = {
  tenantId: string;
  username: string;
  password: string;
  /** Without a login in it: the subscriber logs in with `username` and `password`. */
  natsUrl?: string;
  mqttUrl?: string;
};

/**
 * Reads the text of a credentials file (`file` names it in the messages), refusing with what to do
 * when a field a subscriber needs is missing.
 */
export function subscriberCredentials(text: string, file: string): SubscriberCredentials {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not JSON: delete it and run npm start again to write it anew`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`${file} is not a JSON object: delete it and run npm start again`);
  const fields = parsed as Record<string, unknown>;
  const field = (name: string): string | undefined => (typeof fields[name] === 'string' && fields[name] !== '' ? (fields[name] as string) : undefined);
  for (const name of ['tenant_id', 'bus_username', 'bus_password']) {
    if (!field(name))
      throw new Error(`${file} has no ${name}: run npm start (it writes the demo tenant's bus credential there), or give --credentials another file`);
  }
  return {
    tenantId: field('tenant_id')!,
    username: field('bus_username')!,
    password: field('bus_password')!,
    natsUrl: withoutLogin(field('nats_url')),
    // topology.json lists the MQTT listener of every NATS node: any one serves the tenant.
    mqttUrl: withoutLogin(field('mqtt_url') ?? (Array.isArray(fields.mqtt_urls) && typeof fields.mqtt_urls[0] === 'string' ? fields.mqtt_urls[0] : undefined)),
  };
}

/**
 * A URL (or a NATS server list) without the login it may carry: topology.json's nats_url logs a tool
 * in as the platform's admin, which a subscriber neither needs nor may show in what it prints
 * (docs/adr/0026-bus-authorization.md).
 */
function withoutLogin(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  return url
    .split(',')
    .map((part) => {
      const server = part.trim();
      if (!server.includes('://')) return server;
      const parsed = new URL(server);
      parsed.username = '';
      parsed.password = '';
      return parsed.toString().replace(/\/$/, '');
    })
    .join(',');
}
