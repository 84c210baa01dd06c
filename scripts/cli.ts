// `npm run cli -- <command>`: the platform team's tool for tenants and their credentials.
// Uses DATABASE_URL, or the local database of a running `npm start` (.data/platform.json).
import { existsSync, readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import knex, { type Knex } from 'knex';
import { exportPKCS8, generateKeyPair } from 'jose';
import { createAccessKey, createApiKey, createTenant } from '../management-service/src/admin/provisioning.ts';
import { listTenants, revokeAccessKey, revokeApiKey } from '../management-service/src/store/credentials.ts';
import { migrateLatest } from '../management-service/src/store/migrate.ts';
import { listDestinations, removeDestination, setDestination } from '../management-service/src/store/destinations.ts';

function databaseUrl(): string {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const local = `${process.env.PLATFORM_DATA_DIR ?? '.data'}/platform.json`;
  if (existsSync(local)) return (JSON.parse(readFileSync(local, 'utf8')) as { database_url: string }).database_url;
  throw new Error('Set DATABASE_URL to the management database (or run `npm start`, whose local database the CLI then uses).');
}

async function withDb<T>(work: (db: Knex) => Promise<T>): Promise<void> {
  const db = knex({ client: 'pg', connection: databaseUrl(), pool: { min: 0, max: 2 } });
  try {
    const result = await work(db);
    if (result !== undefined) console.log(JSON.stringify(result, null, 2));
  } finally {
    await db.destroy();
  }
}

const program = new Command('cli').description('Platform administration: database, tenants, credentials.').showHelpAfterError();

program.command('migrate').description('apply pending database migrations').action(() => withDb(async (db) => ({ applied: await migrateLatest(db) })));

const tenant = program.command('tenant').description('tenants');
tenant
  .command('create <id>')
  .description('create a tenant (id: lower-case letters, digits, dashes)')
  .option('--name <name>', 'display name')
  .addOption(new Option('--broker-integration <mode>', 'who integrates the broker').choices(['CLIENT', 'SERVICE']).default('CLIENT'))
  .action((id: string, o: { name?: string; brokerIntegration: 'CLIENT' | 'SERVICE' }) =>
    withDb((db) => createTenant(db, { id, name: o.name, brokerIntegration: o.brokerIntegration })),
  );
tenant.command('list').description('list tenants').action(() => withDb((db) => listTenants(db)));

const accessKey = program.command('access-key').description('management access keys (machine clients)');
accessKey
  .command('create <tenant>')
  .description('create an access key; its secret is shown once')
  .option('--description <text>')
  .action((tenantId: string, o: { description?: string }) => withDb((db) => createAccessKey(db, tenantId, o.description)));
accessKey
  .command('revoke <id>')
  .description('revoke an access key (its refresh tokens stop working)')
  .action((id: string) => withDb(async (db) => ({ revoked: await revokeAccessKey(db, id) })));

const apiKey = program.command('api-key').description('data API keys (analysts)');
apiKey
  .command('create <tenant>')
  .description('create an API key; it is shown once')
  .option('--description <text>')
  .action((tenantId: string, o: { description?: string }) => withDb((db) => createApiKey(db, tenantId, o.description)));
apiKey
  .command('revoke <id>')
  .description('revoke an API key')
  .action((id: string) => withDb(async (db) => ({ revoked: await revokeApiKey(db, id) })));

const destination = program.command('destination').description("a tenant's own message bus that receives its events");
destination
  .command('set-mqtt <tenant> <url>')
  .description('forward the tenant\'s events to an MQTT broker (QoS 1), e.g. mqtts://user:pass@broker:8883')
  .option('--topic <topic>', 'topic to publish on (default tenants/<tenant>/events)')
  .action((tenantId: string, url: string, o: { topic?: string }) => {
    if (!/^mqtts?:\/\//.test(url)) throw new Error('The URL must start with mqtt:// or mqtts://.');
    return withDb((db) => setDestination(db, { tenant_id: tenantId, kind: 'mqtt', url, topic: o.topic ?? `tenants/${tenantId}/events` }));
  });
destination
  .command('set-amqp <tenant> <url>')
  .description('forward the tenant\'s events to an AMQP 0-9-1 exchange (publisher confirms), e.g. amqps://user:pass@broker/vhost')
  .requiredOption('--exchange <name>', 'exchange to publish to (it must exist)')
  .option('--routing-key <key>', 'routing key (default tenants.<tenant>.events)')
  .action((tenantId: string, url: string, o: { exchange: string; routingKey?: string }) => {
    if (!/^amqps?:\/\//.test(url)) throw new Error('The URL must start with amqp:// or amqps://.');
    return withDb((db) => setDestination(db, { tenant_id: tenantId, kind: 'amqp', url, exchange: o.exchange, routing_key: o.routingKey ?? `tenants.${tenantId}.events` }));
  });
destination
  .command('remove <tenant>')
  .description('stop forwarding the tenant\'s events')
  .action((tenantId: string) => withDb(async (db) => ({ removed: await removeDestination(db, tenantId) })));
destination.command('list').description('configured destinations').action(() => withDb((db) => listDestinations(db)));

program
  .command('signing-key')
  .description('print a new ES256 private key (PKCS#8 PEM) for JWT_PRIVATE_KEY')
  .action(async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    process.stdout.write(await exportPKCS8(privateKey));
  });

try {
  await program.parseAsync();
} catch (error) {
  const e = error as Error & { code?: string; constraint?: string };
  console.error(e.code === '23505' ? `Already exists (${e.constraint}).` : e.code === '23503' ? 'No such tenant.' : e.message);
  process.exit(1);
}
