// A subscriber to a tenant's events in Node.js, as an integrator writes one: it logs in to the MQTT
// listener of the event bus with the tenant's bus credential and prints each event as one JSON line.
// Run from the repository root while `npm start` runs:
//   node docs/examples/subscribe-events.mjs [path/to/credentials.json]
// The file is the one `npm start` writes (.data/credentials.json): tenant_id, bus_username,
// bus_password and mqtt_url. Events arrive at QoS 0 (docs/adr/0026-bus-authorization.md): a
// subscriber that must not miss any catches up with GET /events/ and its cursor
// (docs/adr/0002-event-feed-cursor.md). Ctrl-C stops it.
import { readFileSync } from 'node:fs';
import mqtt from 'mqtt';

const file = process.argv[2] ?? '.data/credentials.json';
const credentials = JSON.parse(readFileSync(file, 'utf8'));
const topic = `tenants/${credentials.tenant_id}/events`;

// The listener speaks MQTT 3.1.1 (protocolVersion 4); mqtt.js reconnects and subscribes again by itself.
const client = await mqtt.connectAsync(
  credentials.mqtt_url,
  { protocolVersion: 4, username: credentials.bus_username, password: credentials.bus_password },
  false,
);
client.on('message', (_topic, payload) => {
  const event = JSON.parse(payload.toString('utf8'));
  console.log(JSON.stringify(event));
});
client.on('error', (error) => console.error(`MQTT: ${error.message}`));
await client.subscribeAsync(topic, { qos: 0 });
console.error(`subscribed to ${topic} at ${credentials.mqtt_url}; Ctrl-C stops`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => client.end(() => process.exit(0)));
}
