// `npm run cli -- <command>` (compiled: `node cli/dist/main.js <command>`): the platform team's tool for tenants and their credentials, and for
// the data service's reference data and tenant universes. Uses DATABASE_URL (or the file DATABASE_URL_FILE names), or the local database
// of a running `npm start` (.data/platform.json); `data sample` and `data ingest` need no database.
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import { exportPKCS8, generateKeyPair } from 'jose';
import { createAccessKey, createApiKey, createTenant, setTenantRateLimits } from '@platform/management-service/admin/provisioning';
import { listTenants, revokeAccessKey, revokeApiKey } from '@platform/management-service/store/credentials';
import { migrateLatest } from '@platform/management-service/store/migrate';
import { loadRetentionConfig } from '@platform/management-service/config';
import { runRetention } from '@platform/management-service/jobs/retention';
import { eraseUser } from '@platform/management-service/flows/erasure';
import { inTenant } from '@platform/management-service/store/tenant-scope';
import { listDestinations, removeDestination, setDestination } from '@platform/management-service/store/destinations';
import { redactDestination } from '@platform/management-service/admin/redact';
import { ingestReferenceData, pruneReferenceFiles } from '@platform/data-service/ingest/ingest';
import { consoleProgress } from '@platform/data-service/ingest/progress';
import { generateSample } from '@platform/data-service/sample/generate';
import { buildReferenceFile } from '@platform/data-service/store/reference-files';
import { writeTenantData } from '@platform/data-service/tenant-data/postgres';
import { parseUniverseMembers, removeUniversePg, setUniversePg, UNIVERSE_NAME } from '@platform/data-service/tenant-data/universes';
import { answerVersionFlag, createLogger, exitUnlessSupportedNode } from '@platform/shared';
import { addBusCredentialCommands } from './bus-credentials.ts';

function databaseUrl(): string {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  // A mounted Secret file, as the services read it (Kubernetes: k8s/README.md).
  if (process.env.DATABASE_URL_FILE) return readFileSync(process.env.DATABASE_URL_FILE, 'utf8').trim();
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

/** For the data service's tables, written with its own code (data-service/src/tenant-data/). */
async function withPool<T>(work: (pool: pg.Pool) => Promise<T>): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl(), max: 1 });
  try {
    console.log(JSON.stringify(await work(pool), null, 2));
  } finally {
    await pool.end();
  }
}

const program = new Command('cli').description('Platform administration: database, tenants, credentials, reference data.').showHelpAfterError();

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(() => withDb(async (db) => ({ applied: await migrateLatest(db) })));

const tenant = program.command('tenant').description('tenants');
tenant
  .command('create <id>')
  .description('create a tenant (id: lower-case letters, digits, dashes)')
  .option('--name <name>', 'display name')
  .addOption(new Option('--broker-integration <mode>', 'who integrates the broker').choices(['CLIENT', 'SERVICE']).default('CLIENT'))
  .action((id: string, o: { name?: string; brokerIntegration: 'CLIENT' | 'SERVICE' }) =>
    withDb((db) => createTenant(db, { id, name: o.name, brokerIntegration: o.brokerIntegration })),
  );
tenant
  .command('list')
  .description('list tenants')
  .action(() => withDb((db) => listTenants(db)));

/** A `--…-per-minute` value: a whole number, or `default` for the service's own setting. */
const perMinute = (raw: string): number | null => (raw === 'default' ? null : /^\d+$/.test(raw) ? Number(raw) : Number.NaN);
tenant
  .command('set-limits <tenant>')
  .description("set the tenant's own rate limits (requests per minute; `default`: the service's setting again)")
  .option('--requests-per-minute <n>', 'for each of its access keys (machine clients) and API keys')
  .option('--user-requests-per-minute <n>', 'for each of its end users')
  .action((id: string, o: { requestsPerMinute?: string; userRequestsPerMinute?: string }) =>
    withDb((db) =>
      setTenantRateLimits(db, id, {
        requests_per_minute: o.requestsPerMinute === undefined ? undefined : perMinute(o.requestsPerMinute),
        user_requests_per_minute: o.userRequestsPerMinute === undefined ? undefined : perMinute(o.userRequestsPerMinute),
      }),
    ),
  );

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

addBusCredentialCommands(program, withDb, () => knex({ client: 'pg', connection: databaseUrl(), pool: { min: 0, max: 2 } }));

const destination = program.command('destination').description("a tenant's own message bus that receives its events");
destination
  .command('set-mqtt <tenant> <url>')
  .description("forward the tenant's events to an MQTT broker (QoS 1), e.g. mqtts://user:pass@broker:8883")
  .option('--topic <topic>', 'topic to publish on (default tenants/<tenant>/events)')
  .action((tenantId: string, url: string, o: { topic?: string }) => {
    if (!/^mqtts?:\/\//.test(url)) throw new Error('The URL must start with mqtt:// or mqtts://.');
    return withDb(async (db) =>
      redactDestination(await setDestination(db, { tenant_id: tenantId, kind: 'mqtt', url, topic: o.topic ?? `tenants/${tenantId}/events` })),
    );
  });
destination
  .command('set-amqp <tenant> <url>')
  .description("forward the tenant's events to an AMQP 0-9-1 exchange (publisher confirms), e.g. amqps://user:pass@broker/vhost")
  .requiredOption('--exchange <name>', 'exchange to publish to (it must exist)')
  .option('--routing-key <key>', 'routing key (default tenants.<tenant>.events)')
  .action((tenantId: string, url: string, o: { exchange: string; routingKey?: string }) => {
    if (!/^amqps?:\/\//.test(url)) throw new Error('The URL must start with amqp:// or amqps://.');
    return withDb(async (db) =>
      redactDestination(
        await setDestination(db, { tenant_id: tenantId, kind: 'amqp', url, exchange: o.exchange, routing_key: o.routingKey ?? `tenants.${tenantId}.events` }),
      ),
    );
  });
destination
  .command('remove <tenant>')
  .description("stop forwarding the tenant's events")
  .action((tenantId: string) => withDb(async (db) => ({ removed: await removeDestination(db, tenantId) })));
destination
  .command('list')
  .description('configured destinations (passwords in their URLs shown as ***)')
  .action(() => withDb(async (db) => (await listDestinations(db)).map(redactDestination)));

// The reference directory `npm start` uses (DUCKDB_PATH .data/data.duckdb → .data/reference).
const defaultReferenceDir = () => process.env.REFERENCE_DIR ?? `${process.env.PLATFORM_DATA_DIR ?? '.data'}/reference`;
const positiveInteger = (name: string) => (value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError(`${name} must be a positive integer.`);
  return Number(value);
};

const data = program.command('data').description('reference data of the data service: files every replica attaches, newest first, without restarting');
data
  .command('sample')
  .description('write a generated, labelled SAMPLE universe as a new reference file')
  .option('--instruments <n>', 'instruments', positiveInteger('--instruments'), 5000)
  .option('--years <n>', 'years of daily prices', positiveInteger('--years'), 10)
  .option('--seed <n>', 'seed: the same seed gives the same universe', positiveInteger('--seed'), 42)
  .option('--reference-dir <dir>', 'reference directory (default: REFERENCE_DIR or .data/reference)')
  .option('--keep <n>', 'reference files to keep, the new one included', positiveInteger('--keep'), 3)
  .action(async (o: { instruments: number; years: number; seed: number; referenceDir?: string; keep: number }) => {
    const dir = o.referenceDir ?? defaultReferenceDir();
    const started = Date.now();
    process.stderr.write(`generating ${o.instruments} instruments × ${o.years} years into ${dir}\n`);
    let summary: Awaited<ReturnType<typeof generateSample>> | undefined;
    const file = await buildReferenceFile(dir, 'sample', async (conn) => {
      summary = await generateSample(conn, { instruments: o.instruments, years: o.years, seed: o.seed });
    });
    const deleted = await pruneReferenceFiles(dir, o.keep);
    const { size } = await stat(file);
    console.log(
      JSON.stringify({ reference_file: file, bytes: size, seconds: (Date.now() - started) / 1000, ...summary, deleted_reference_files: deleted }, null, 2),
    );
  });
data
  .command('ingest')
  .description('load vendor files (CSV or Parquet, by extension) into a new reference file; rejected rows are listed and written to <file>.rejects.csv')
  .requiredOption('--instruments <file>', 'one row per instrument: ISIN, NAME, TICKER, ASSET_CLASS, … (upper-case columns)')
  .option('--prices <file>', 'daily closes: ISIN, DATE, CLOSE')
  .option('--factors <file>', 'raw factor metrics: ISIN, VALUE, GROWTH, MOMENTUM, STABILITY, FINANCIAL_HEALTH, PROFITABILITY, SIZE, DIVIDEND')
  .option(
    '--universe <NAME=file>',
    'a named universe (file with an ISIN column); repeatable; GLOBAL defaults to every instrument',
    (value: string, all: Record<string, string>) => {
      const at = value.indexOf('=');
      if (at < 1 || at === value.length - 1) throw new InvalidArgumentError('Use --universe NAME=file, e.g. --universe ROBO=robo.csv.');
      return { ...all, [value.slice(0, at)]: value.slice(at + 1) };
    },
    {} as Record<string, string>,
  )
  .option('--fx-rates <file>', "the ECB's daily exchange rates as eurofxref-hist.csv: Date, then a column per currency (units per 1 EUR), N/A where none")
  .option('--reference-dir <dir>', 'reference directory (default: REFERENCE_DIR or .data/reference)')
  .option('--rejects-dir <dir>', 'where the rejects files go (default: beside each input)')
  .option('--list-rejects <n>', 'rejected rows listed per file in the report', positiveInteger('--list-rejects'), 10)
  .option('--keep <n>', 'reference files to keep, the new one included', positiveInteger('--keep'), 3)
  .action(
    async (o: {
      instruments: string;
      prices?: string;
      factors?: string;
      universe: Record<string, string>;
      fxRates?: string;
      referenceDir?: string;
      rejectsDir?: string;
      listRejects: number;
      keep: number;
    }) => {
      const progress = consoleProgress(process.stderr);
      const started = Date.now();
      try {
        const report = await ingestReferenceData(
          { instruments: o.instruments, prices: o.prices, factors: o.factors, universes: o.universe, fxRates: o.fxRates },
          { referenceDir: o.referenceDir ?? defaultReferenceDir(), rejectsDir: o.rejectsDir, listRejects: o.listRejects, keep: o.keep, progress },
        );
        progress.finish();
        for (const f of report.files) {
          process.stderr.write(`${f.file}: ${f.accepted} of ${f.rows} rows accepted${f.rejected ? `, ${f.rejected} rejected (${f.rejects_file})` : ''}\n`);
        }
        process.stderr.write(
          `published ${report.reference_file} in ${((Date.now() - started) / 1000).toFixed(1)} s; replicas switch to it at their next reload\n`,
        );
        console.log(JSON.stringify(report, null, 2));
      } finally {
        progress.finish();
      }
    },
  );

const universe = data
  .command('universe')
  .description("a tenant's own universes, in the management database; every data-service replica serves a change from its next request");
const universeName = (name: string) => {
  if (!UNIVERSE_NAME.test(name)) throw new InvalidArgumentError('A universe name is 1 to 64 letters, digits, _ or -.');
  return name;
};
universe
  .command('set <tenant> <NAME> <file>')
  .description(
    "make the ISINs of <file> (one per line, or a CSV with an ISIN column) the members of the tenant's universe NAME, replacing its earlier members; every ISIN is checked and nothing is written when one is bad",
  )
  .action(async (tenantId: string, name: string, file: string) => {
    universeName(name);
    const isins = parseUniverseMembers(await readFile(file, 'utf8'));
    return withPool(async (pool) => {
      const { result, version } = await writeTenantData(pool, tenantId, (client) => setUniversePg(client, tenantId, name, isins));
      return { tenant: tenantId, universe: name, members: result, version };
    });
  });
universe
  .command('remove <tenant> <NAME>')
  .description("drop the tenant's universe NAME")
  .action((tenantId: string, name: string) => {
    universeName(name);
    return withPool(async (pool) => {
      const { result, version } = await writeTenantData(
        pool,
        tenantId,
        (client) => removeUniversePg(client, tenantId, name),
        (n) => n > 0,
      );
      return { tenant: tenantId, universe: name, removed: result, ...(version === undefined ? {} : { version }) };
    });
  });
universe
  .command('list <tenant>')
  .description("the tenant's universes and their member counts")
  .action((tenantId: string) =>
    withPool(async (pool) => {
      const { rows } = await pool.query<{ universe: string; members: number }>(
        'select universe_name as universe, count(*)::int as members from data_universes where tenant_id = $1 group by universe_name order by universe_name',
        [tenantId],
      );
      return rows;
    }),
  );

const user = program.command('user').description("a tenant's users (customers)");
user
  .command('erase <tenant> <user_id>')
  .description(
    "erase the user's personal data in every version, as POST /users/{user_id}/erasure/ does (docs/adr/0059-personal-data-erasure.md); refused, naming each portfolio, while one is open",
  )
  .action((tenantId: string, userId: string) =>
    withDb(async (db) => {
      const operator = { tenantId, kind: 'machine' as const, subject: 'operator' };
      const erased = await inTenant(db, tenantId, (trx, tenant) => eraseUser(trx, tenant, operator, userId, new Date().toISOString()));
      return { erased: erased.id, erased_at: erased.doc.erased_at, version: erased.version };
    }),
  );

const retention = program.command('retention').description('removal of rows past their period (docs/adr/0061-retention.md)');
retention
  .command('run')
  .description(
    'run the nightly retention now (OUTBOX_RETENTION_DAYS, RETENTION_BATCH_ROWS as the service reads them); waits for nothing: skipped while a replica runs it',
  )
  .action(() => {
    const config = loadRetentionConfig();
    return withDb(async (db) => {
      const logger = createLogger('cli', 'warn');
      const settings = { outboxDays: config.OUTBOX_RETENTION_DAYS, erasedUserYears: config.RETENTION_ERASED_USER_YEARS };
      return (await runRetention({ db, logger, settings, batch: config.RETENTION_BATCH_ROWS })) ?? { skipped: 'a replica is running the retention now' };
    });
  });

program
  .command('signing-key')
  .description('a new ES256 private key (PKCS#8 PEM) for JWT_PRIVATE_KEY, printed (use `npm run -s`: npm prints a banner otherwise) or written to --out')
  .option('--out <file>', 'write the key to this file, readable by its owner only (0600), instead of printing it')
  .action(async (o: { out?: string }) => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const pem = `${(await exportPKCS8(privateKey)).trim()}\n`;
    if (o.out === undefined) {
      process.stdout.write(pem);
      return;
    }
    // Written beside the target with 0600 from its creation and renamed over it, so the key is never
    // readable by others, not even for a moment, and a file it replaces is whole or untouched.
    const temporary = join(dirname(o.out), `.${basename(o.out)}.${process.pid}.tmp`);
    try {
      await writeFile(temporary, pem, { mode: 0o600, flag: 'wx' });
      await rename(temporary, o.out);
    } catch (error) {
      await rm(temporary, { force: true });
      throw new Error(`Cannot write ${o.out}: ${(error as Error).message}`, { cause: error });
    }
    console.error(`wrote a new ES256 signing key to ${o.out} (0600)`);
  });

exitUnlessSupportedNode('cli', process, console.error);
try {
  if (!answerVersionFlag(process, console.log)) await program.parseAsync();
} catch (error) {
  const e = error as Error & { code?: string; constraint?: string };
  console.error(e.code === '23505' ? `Already exists (${e.constraint}).` : e.code === '23503' ? 'No such tenant.' : e.message);
  process.exit(1);
}
