// `npm run events:tail`: a tenant's live events, one JSON line each on stdout as they arrive
// (subject, action, entity_id, created, id), read with the tenant's bus credential from `npm start`'s
// credentials file. NATS by default (core subscription on tenants.<tenant>.events), `--mqtt` for the
// MQTT listener (topic tenants/<tenant>/events). What it is doing goes to stderr. Ctrl-C, SIGINT or
// SIGTERM closes the connection and exits with 0. `npm run topology`'s .data/topology.json serves as
// well (--credentials).
//   npm run events:tail [-- --mqtt] [-- --credentials path/to/credentials.json]
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import mqtt from 'mqtt';
import { connectNats, subjects } from '@platform/shared';
import { eventLine } from './lib/event-line.ts';
import { onStopSignals } from './lib/stop-signals.ts';
import { subscriberCredentials, type SubscriberCredentials } from './lib/subscriber-credentials.ts';

const USAGE = 'usage: npm run events:tail -- [--mqtt] [--credentials <file>]  (default file: $PLATFORM_DATA_DIR/credentials.json, else .data/credentials.json)';
const log = (line: string) => console.error(`[events:tail] ${line}`);

/** A subscription that prints every event it gets; `close` ends it and its connection. */
type Tail = { close: () => Promise<void> };

async function tailNats(credentials: SubscriberCredentials, url: string): Promise<Tail> {
  const nc = await connectNats(url, 'events-tail', { user: credentials.username, pass: credentials.password });
  const subject = subjects.tenantEvents(credentials.tenantId);
  const subscription = nc.subscribe(subject);
  // The server has the subscription once it answered the flush: from here no event is missed.
  await nc.flush();
  log(`listening on NATS subject ${subject} at ${url} as ${credentials.username}; Ctrl-C stops`);
  void (async () => {
    for await (const message of subscription) console.log(eventLine(message.string()));
  })();
  void nc.closed().then((error) => {
    if (error && !stopping) {
      log(`the connection closed: ${error.message}`);
      process.exit(1);
    }
  });
  return { close: () => nc.drain() };
}

async function tailMqtt(credentials: SubscriberCredentials, url: string): Promise<Tail> {
  // nats-server's MQTT listener speaks MQTT 3.1.1 only (docs/adr/0026-bus-authorization.md). The first
  // connection must succeed (a wrong password fails here); a later loss reconnects and subscribes again.
  const client = await mqtt.connectAsync(url, { protocolVersion: 4, username: credentials.username, password: credentials.password, clean: true }, false);
  const topic = `tenants/${credentials.tenantId}/events`;
  client.on('message', (_topic, payload) => console.log(eventLine(payload.toString('utf8'))));
  client.on('error', (error) => log(`MQTT: ${error.message}`));
  const granted = await client.subscribeAsync(topic, { qos: 0 });
  if (granted.some((grant) => grant.qos === 128)) throw new Error(`the MQTT listener refused the subscription to ${topic}`);
  log(`listening on MQTT topic ${topic} at ${url} as ${credentials.username}; Ctrl-C stops`);
  return { close: () => client.endAsync() };
}

let stopping = false;
let tail: Tail | undefined;

async function stop(): Promise<void> {
  stopping = true;
  await tail?.close().catch((error: Error) => log(error.message));
  process.exit(0);
}
onStopSignals({ stop: () => void stop(), exit: () => process.exit(0) });

try {
  let options;
  try {
    options = parseArgs({
      options: { credentials: { type: 'string' }, mqtt: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const file = resolve(options.credentials ?? `${process.env.PLATFORM_DATA_DIR ?? '.data'}/credentials.json`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new Error(`cannot read ${file}: run npm start first (it writes the demo tenant's credentials there), or give --credentials <file>`);
  }
  const credentials = subscriberCredentials(text, file);
  const url = options.mqtt ? credentials.mqttUrl : credentials.natsUrl;
  if (!url) {
    const older = `${file} has no ${options.mqtt ? 'mqtt_url' : 'nats_url'}: it was written by an older npm start; start it again`;
    throw new Error(options.mqtt ? `${older}, or leave out --mqtt (npm start with NATS_URL knows of no MQTT listener)` : older);
  }
  const subscribe = options.mqtt ? tailMqtt : tailNats;
  tail = await subscribe(credentials, url).catch((error: Error) => {
    throw new Error(`cannot subscribe at ${url} as ${credentials.username}: ${error.message}; is npm start running, with ${file} its own?`);
  });
} catch (error) {
  if (!stopping) {
    log((error as Error).message);
    process.exit(1);
  }
}
