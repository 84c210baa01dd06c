// Rate-limit cost benchmark: GET /portfolios/{id} at 32 concurrent clients (autocannon) by two
// tenants of one service, one without a limit (nothing counted) and one with a limit it never
// reaches (every request counted in Postgres, docs/adr/0023-rate-limits.md), alternating rounds;
// medians. `npm run bench:rate-limits` (BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONNECTIONS: 8, 3, 32).
import autocannon from 'autocannon';
import { createAccessKey, createTenant, setTenantRateLimits } from '@platform/management-service/admin/provisioning';
import { median, record, round, startBenchPlatform, type Figures } from './lib/harness.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

// RATE_LIMIT_ACCESS_KEY=0: the harness's tenant counts nothing; the second tenant's own limit wins.
const platform = await startBenchPlatform({ DATABASE_POOL_MAX: String(CONNECTIONS), RATE_LIMIT_ACCESS_KEY: '0' });
await createTenant(platform.db, { id: 'counted' });
await setTenantRateLimits(platform.db, 'counted', { requests_per_minute: 10_000_000 });
const key = await createAccessKey(platform.db, 'counted');
const login = await fetch(`${platform.managementUrl}/auth/login/`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(key),
});
const countedToken = ((await login.json()) as { access_token: string }).access_token;

/** A portfolio of the token's tenant to read. */
async function portfolioOf(token: string): Promise<string> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const post = (path: string, body: unknown) => fetch(`${platform.managementUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const owner = ((await (await post('/users/', {})).json()) as { id: string }).id;
  const body = {
    name: 'Pension',
    owned_by_user_id: owner,
    base_currency: 'EUR',
    money_type: 'REAL_MONEY',
    config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
  };
  return ((await (await post('/portfolios/', body)).json()) as { id: string }).id;
}

async function get(token: string, id: string): Promise<Figures & { limited: boolean }> {
  const result = await autocannon({
    url: `${platform.managementUrl}/portfolios/${id}`,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { authorization: `Bearer ${token}` },
  });
  const probe = await fetch(`${platform.managementUrl}/portfolios/${id}`, { headers: { authorization: `Bearer ${token}` } });
  return {
    rps: round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors + result.non2xx,
    limited: probe.headers.get('ratelimit') !== null,
  };
}

try {
  const free = { token: platform.token, id: await portfolioOf(platform.token) };
  const counted = { token: countedToken, id: await portfolioOf(countedToken) };
  const rounds: { free: Figures & { limited: boolean }; counted: Figures & { limited: boolean } }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    rounds.push({ free: await get(free.token, free.id), counted: await get(counted.token, counted.id) });
    console.log(`[bench] round ${r + 1}: ${JSON.stringify(rounds.at(-1))}`);
  }
  const summary = (pick: 'free' | 'counted') => ({
    rps: median(rounds.map((x) => x[pick].rps)),
    p50_ms: median(rounds.map((x) => x[pick].p50_ms)),
    p99_ms: median(rounds.map((x) => x[pick].p99_ms)),
    errors: rounds.reduce((n, x) => n + x[pick].errors, 0),
    limited: rounds.every((x) => x[pick].limited),
  });
  const figures = { free: summary('free'), counted: summary('counted') };
  const ratio = round(figures.counted.rps / figures.free.rps);
  record(
    'rate-limits',
    { ...figures, ratio, seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS },
    [
      '### Rate limits (`npm run bench:rate-limits`)',
      '',
      `${CONNECTIONS} concurrent clients, ${ROUNDS} alternating rounds of ${SECONDS} s each, medians; measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine.`,
      'GET /portfolios/{id} of one management service by two tenants: one without a limit (nothing counted), one whose limit it never reaches (one upsert in rate_limits per request).',
      '',
      '| tenant | req/s | p50 ms | p99 ms | errors | RateLimit headers |',
      '|---|---|---|---|---|---|',
      `| not counted | ${figures.free.rps} | ${figures.free.p50_ms} | ${figures.free.p99_ms} | ${figures.free.errors} | ${figures.free.limited ? 'yes' : 'no'} |`,
      `| counted in Postgres | ${figures.counted.rps} | ${figures.counted.p50_ms} | ${figures.counted.p99_ms} | ${figures.counted.errors} | ${figures.counted.limited ? 'yes' : 'no'} |`,
      '',
      `Counted / not counted: ${ratio}×.`,
      '',
    ].join('\n'),
  );
} finally {
  await platform.stop();
}
