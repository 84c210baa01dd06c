// The robo nightly batch beside a load: a tenant with `count` robo-advised paper portfolios on one
// policy of the sample universe's EUR ETFs (as bench:optimizer seeds them), asked for in one nightly
// run so that optimizer requests and results cross NATS while faults happen; and afterwards the
// check that every portfolio got its one scheduled optimization answered.
import type { Knex } from 'knex';
import { createLogger } from '@platform/shared';
import { createAccessKey, createApiKey, createTenant, setTenantRateLimits } from '@platform/management-service/admin/provisioning';
import { runNightlyIfDue, type NightlyRun } from '@platform/management-service/jobs/optimizer-nightly';
import type { Check } from './consistency.ts';
import { roboPaperPortfolio, threeEtfPolicy } from './robo-policy.ts';

const TENANT = 'robo';
const CONCURRENCY = 16;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type NightlyBatch = {
  tenantId: string;
  portfolios: string[];
  /** Waits until no optimization of the tenant is PENDING (at most `ms`); the seconds it took. */
  settled: (ms: number) => Promise<number>;
  run: () => Promise<NightlyRun>;
};

/** Creates the tenant, its policy and `count` portfolios through the management service; `run` starts the nightly batch. */
export async function seedNightly(options: { db: Knex; managementUrl: string; dataUrl: string; count: number }): Promise<NightlyBatch> {
  const { db, managementUrl, dataUrl, count } = options;
  await createTenant(db, { id: TENANT });
  await setTenantRateLimits(db, TENANT, { requests_per_minute: 10_000_000 });
  const login = await fetch(`${managementUrl}/auth/login/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(await createAccessKey(db, TENANT, 'nightly')),
  });
  if (login.status !== 200) throw new Error(`login of ${TENANT}: ${login.status} ${await login.text()}`);
  const { access_token: token } = (await login.json()) as { access_token: string };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${managementUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string };
  };
  const apiKey = (await createApiKey(db, TENANT, 'nightly')).api_key;
  const policy = await post('/policies/', await threeEtfPolicy({ dataUrl, tenantId: TENANT, apiKey, name: 'Nightly' }));
  const owner = await post('/users/', {});
  const portfolios: string[] = [];
  let made = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (made < count) {
        made++;
        const p = await post('/portfolios/', roboPaperPortfolio({ name: 'Nightly', ownerId: owner.id, policyId: policy.id }));
        portfolios.push(p.id);
      }
    }),
  );
  const run = async () => {
    const done = await runNightlyIfDue({ db, logger: createLogger('bench', 'warn'), at: '00:00' });
    if (!done) throw new Error('the nightly batch did not run (it ran today already?)');
    return done;
  };
  // Polled through the database's failovers too: a poll the database did not answer counts as "not yet".
  const pending = async () => {
    try {
      const row = (await db('entities')
        .where({ tenant_id: TENANT, type: 'optimizations' })
        .whereRaw(`doc ->> 'status' = 'PENDING'`)
        .count({ n: '*' })
        .first()) as { n: string };
      return Number(row.n);
    } catch {
      return undefined;
    }
  };
  const settled = async (ms: number) => {
    const started = Date.now();
    for (;;) {
      if ((await pending()) === 0 || Date.now() - started > ms) return Math.round((Date.now() - started) / 1000);
      await sleep(1000);
    }
  };
  return { tenantId: TENANT, portfolios, settled, run };
}

type Progress = {
  scheduled: number;
  answeredScheduled: number;
  storedScheduled: number;
  portfolios: number;
  pending: number;
  byStatus: Record<string, number>;
  failures: string[];
};

// A robo portfolio is also optimized when it is created: the batch skips one whose optimization is
// still PENDING, so the batch's own are those asked for with reason SCHEDULED.
async function progress(db: Knex, batch: NightlyBatch): Promise<Progress> {
  const rows = (await db('entities').where({ tenant_id: batch.tenantId, type: 'optimizations' }).whereIn('parent_id', batch.portfolios).select(
    'id',
    'parent_id',
    db.raw(`doc ->> 'status' as status`),
    db.raw(`doc ->> 'status_detail' as detail`),
    db.raw(
      `exists (select 1 from optimization_requests r where r.tenant_id = entities.tenant_id and r.optimization_id = entities.id and r.reason = 'SCHEDULED') as scheduled`,
    ),
    // The optimizer's own answer was stored (its status may still be FAILURE: a solve that found nothing in time).
    db.raw(
      `exists (select 1 from optimization_requests r where r.tenant_id = entities.tenant_id and r.optimization_id = entities.id and r.outcome = 'STORED') as stored`,
    ),
  )) as { id: string; parent_id: string; status: string; detail: string | null; scheduled: boolean; stored: boolean }[];
  const byStatus: Record<string, number> = {};
  for (const r of rows) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
  const scheduled = rows.filter((r) => r.scheduled);
  return {
    scheduled: scheduled.length,
    answeredScheduled: scheduled.filter((r) => r.status !== 'PENDING').length,
    storedScheduled: scheduled.filter((r) => r.stored).length,
    portfolios: new Set(rows.filter((r) => r.status !== 'PENDING').map((r) => r.parent_id)).size,
    pending: byStatus.PENDING ?? 0,
    byStatus,
    failures: rows.filter((r) => r.status === 'FAILURE').map((r) => `${r.parent_id}: ${r.detail}`),
  };
}

/**
 * Waits up to `ms` until no optimization of the batch's portfolios is PENDING; then the batch's
 * `requested` optimizations are all there, each with the optimizer's answer stored (a FAILURE the
 * solver reported counts as answered; one the service gave up waiting for does not), and every
 * portfolio has an answered one.
 */
export async function checkNightly(db: Knex, batch: NightlyBatch, requested: number, ms: number): Promise<{ check: Check; waited_s: number }> {
  const started = Date.now();
  let p = await progress(db, batch);
  while (p.pending > 0 && Date.now() - started < ms) {
    await sleep(1000);
    p = await progress(db, batch);
  }
  const n = batch.portfolios.length;
  return {
    waited_s: Math.round((Date.now() - started) / 1000),
    check: {
      name: "every nightly-batch optimization answered with the optimizer's result stored (none PENDING, none given up on), every portfolio with an answered one",
      ok: p.scheduled === requested && p.answeredScheduled === requested && p.storedScheduled === requested && p.portfolios === n && p.pending === 0,
      detail: `${requested} requested by the batch, ${p.scheduled} written, ${p.answeredScheduled} answered, ${p.storedScheduled} with the optimizer's result stored; ${p.portfolios} of ${n} portfolios with an answered optimization; all optimizations by status ${JSON.stringify(p.byStatus)}${p.failures.length ? `; FAILURE: ${p.failures.slice(0, 3).join('; ')}` : ''}`,
    },
  };
}
