// The peer of bench/entity-store.ts: the portfolio service a competent team would write by hand for
// the same three operations, in a process of its own as the service is. Express 5; ES256 JWT
// verification with jose against the management service's JWKS, fetched once and cached; Ajv
// validation of the request body against the same schema of the contract; the same rows (entity,
// version) plus an audit row, scoped by `where tenant_id = $1` in place of row-level security; JSON
// out. No outbox, idempotency, access log, metrics or spans.
// `tsx bench/baselines/peer-express.ts <port> <database url> <management url>`
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import pg from 'pg';
import { ulid } from 'ulid';
import { parse } from 'yaml';

const [port, databaseUrl, managementUrl] = [Number(process.argv[2]), process.argv[3]!, process.argv[4]!];
const pool = new pg.Pool({ connectionString: databaseUrl, max: Number(process.env.PEER_POOL_MAX ?? 32) });
const jwks = createLocalJWKSet((await (await fetch(`${managementUrl}/.well-known/jwks.json`)).json()) as JSONWebKeySet);

const contract = parse(readFileSync(new URL('../../contracts/management.openapi.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;
const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
(addFormats as unknown as typeof addFormats.default)(ajv);
ajv.addSchema({ ...contract, $id: 'contract' });
const validCreate = ajv.getSchema('contract#/components/schemas/PortfolioCreate')!;
const validPatch = ajv.getSchema('contract#/components/schemas/PortfolioPatch')!;

type Caller = { tenant: string; subject: string };
const problem = (res: Response, status: number, code: string, detail: string, errors?: unknown) =>
  res.status(status).type('application/problem+json').json({ status, code, detail, errors });

const app = express();
app.use(express.json({ limit: '1mb' }));
app.use(async (req: Request, res: Response, next: NextFunction) => {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!token) return problem(res, 401, 'unauthenticated', 'A bearer token is required.');
  try {
    const { payload } = await jwtVerify(token, jwks, { algorithms: ['ES256'], requiredClaims: ['sub', 'exp', 'tenant_id'] });
    res.locals.caller = { tenant: String(payload.tenant_id), subject: String(payload.sub) } satisfies Caller;
    next();
  } catch {
    problem(res, 401, 'unauthenticated', 'The token is not valid.');
  }
});

const COLUMNS = 'id, version, doc, deleted, created_at, version_at';
const present = (row: { id: string; version: number; doc: Record<string, unknown>; created_at: Date; version_at: Date }) => ({
  id: row.id,
  version: row.version,
  ...row.doc,
  created_at: row.created_at.toISOString(),
  version_at: row.version_at.toISOString(),
});

/** Runs `work` in one transaction on one connection. */
async function inTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}

const audit = (client: pg.PoolClient, caller: Caller, id: string, action: string, at: Date) =>
  client.query('insert into peer_audit (tenant_id, entity_id, action, actor, at) values ($1, $2, $3, $4, $5)', [caller.tenant, id, action, caller.subject, at]);

app.post('/portfolios/', async (req, res) => {
  if (!validCreate(req.body)) return problem(res, 422, 'validation_failed', 'The body is not valid.', validCreate.errors);
  const caller = res.locals.caller as Caller;
  const doc = req.body as Record<string, unknown>;
  const owner = String(doc.owned_by_user_id);
  const row = await inTransaction(async (client) => {
    const user = await client.query("select 1 from entities where tenant_id = $1 and id = $2 and type = 'users' and not deleted", [caller.tenant, owner]);
    if (user.rowCount === 0) return undefined;
    const id = `P${ulid()}`;
    const now = new Date();
    const inserted = await client.query(
      `insert into entities (tenant_id, id, type, version, doc, readable_by, modifiable_by, created_at, version_at, version_author_id)
       values ($1, $2, 'portfolios', 1, $3, $4, $4, $5, $5, $6) returning ${COLUMNS}`,
      [caller.tenant, id, doc, [owner], now, caller.subject],
    );
    await client.query(
      `insert into entity_versions (tenant_id, id, version, doc, deleted, version_at, version_author_id) values ($1, $2, 1, $3, false, $4, $5)`,
      [caller.tenant, id, doc, now, caller.subject],
    );
    await audit(client, caller, id, 'create', now);
    return inserted.rows[0];
  });
  if (!row) return problem(res, 422, 'validation_failed', 'The owner does not exist.', [{ loc: ['body', 'owned_by_user_id'] }]);
  res.status(201).location(`/portfolios/${row.id}`).json(present(row));
});

app.patch('/portfolios/:id', async (req, res) => {
  if (!validPatch(req.body)) return problem(res, 422, 'validation_failed', 'The body is not valid.', validPatch.errors);
  const caller = res.locals.caller as Caller;
  const row = await inTransaction(async (client) => {
    const { rows } = await client.query(
      `select version, doc from entities where tenant_id = $1 and id = $2 and type = 'portfolios' and not deleted for update`,
      [caller.tenant, req.params.id],
    );
    if (rows.length === 0) return undefined;
    const doc = { ...rows[0].doc, ...(req.body as Record<string, unknown>) };
    const version = rows[0].version + 1;
    const now = new Date();
    const updated = await client.query(
      `update entities set version = $3, doc = $4, version_at = $5, version_author_id = $6 where tenant_id = $1 and id = $2 returning ${COLUMNS}`,
      [caller.tenant, req.params.id, version, doc, now, caller.subject],
    );
    await client.query(
      `insert into entity_versions (tenant_id, id, version, doc, deleted, version_at, version_author_id) values ($1, $2, $3, $4, false, $5, $6)`,
      [caller.tenant, req.params.id, version, doc, now, caller.subject],
    );
    await audit(client, caller, req.params.id, 'update', now);
    return updated.rows[0];
  });
  if (!row) return problem(res, 404, 'not_found', 'No such portfolio.');
  res.json(present(row));
});

app.get('/portfolios/:id', async (req, res) => {
  const caller = res.locals.caller as Caller;
  const { rows } = await pool.query(`select ${COLUMNS} from entities where tenant_id = $1 and id = $2 and type = 'portfolios' and not deleted`, [
    caller.tenant,
    req.params.id,
  ]);
  if (rows.length === 0) return problem(res, 404, 'not_found', 'No such portfolio.');
  res.json(present(rows[0]));
});

await pool.query(
  'create table if not exists peer_audit (tenant_id text not null, entity_id text not null, action text not null, actor text not null, at timestamptz not null)',
);
const server = createServer(app);
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
