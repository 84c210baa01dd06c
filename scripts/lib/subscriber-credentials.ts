/** What a subscriber to a tenant's events needs of `npm start`'s credentials file. */
export type SubscriberCredentials = {
  tenantId: string;
  username: string;
  password: string;
  /** Without credentials in it: the subscriber logs in with `username` and `password`. */
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
    natsUrl: field('nats_url'),
    mqttUrl: field('mqtt_url'),
  };
}
