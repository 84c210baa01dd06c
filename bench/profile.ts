// Where the management service's CPU goes under the load of bench:entities: V8's sampling profiler
// in the service (bench/profile/preload.mjs) during `GET /livez`, `POST /portfolios/`,
// `PATCH /portfolios/{id}` and `GET /portfolios/{id}`, one after the other after a warm-up, each
// written as text (top frames by self time, modules on the stack) to docs/profiles/entities-<label>.md.
// `npm run bench:profile -- <label>` (BENCH_SECONDS, BENCH_CONNECTIONS: 8 and 32 by default).
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuSeconds } from './lib/cpu.ts';
import { portfolioRequest, settle as settleDb } from './lib/entity-load.ts';
import { round, startBenchPlatform } from './lib/harness.ts';
import { summarize, summaryMarkdown, type CpuProfile } from './profile/analyze.ts';

const label = process.argv[2];
if (!label || !/^[a-z0-9-]+$/.test(label)) throw new Error('say what the profile is of: npm run bench:profile -- <label> (lower case, digits, dashes)');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

const dir = mkdtempSync(join(tmpdir(), 'platform-profile-'));
const preload = new URL('./profile/preload.mjs', import.meta.url).pathname;
const platform = await startBenchPlatform({ DATABASE_POOL_MAX: String(CONNECTIONS), LOG_LEVEL: 'info', RATE_LIMIT_ACCESS_KEY: '0', PROFILE_DIR: dir }, [
  '--import',
  preload,
]);
const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
const { headers, body } = await portfolioRequest(platform);

type Operation = { name: string; method: 'GET' | 'POST' | 'PATCH'; path: (id: string, i: number) => string; body?: (i: number) => string };
const operations: Operation[] = [
  { name: '`GET /livez`', method: 'GET', path: () => '/livez' },
  { name: '`POST /portfolios/`', method: 'POST', path: () => '/portfolios/', body: () => body },
  { name: '`PATCH /portfolios/{id}`', method: 'PATCH', path: (id) => `/portfolios/${id}`, body: (i) => JSON.stringify({ name: `name ${i}` }) },
  { name: '`GET /portfolios/{id}`', method: 'GET', path: (id) => `/portfolios/${id}` },
];

async function load(operation: Operation, ids: string[]): Promise<{ answered: number; non2xx: number }> {
  let i = 0;
  const result = await autocannon({
    url: platform.managementUrl,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers,
    requests: [
      {
        method: operation.method,
        setupRequest: (req) => {
          const n = i++;
          return { ...req, path: operation.path(ids[n % Math.max(ids.length, 1)] ?? '', n), body: operation.body?.(n) };
        },
      },
    ],
  });
  return { answered: result.requests.total, non2xx: result.non2xx + result.errors };
}

const settle = () => settleDb(platform.db, ['entities', 'entity_versions', 'outbox']);

async function waitFor(file: string): Promise<string> {
  for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
  return readFileSync(file, 'utf8');
}

// Warm-up, not profiled: portfolios to patch and read, and the code compiled.
await load(operations[1]!, []);
await load(operations[0]!, []);
const ids = (await platform.db('entities').where({ type: 'portfolios' }).limit(2000).pluck('id')) as string[];

const sections: string[] = [];
for (const [k, operation] of operations.entries()) {
  await settle();
  const cpuBefore = cpuSeconds([pid]);
  process.kill(pid, 'SIGUSR2');
  const { answered, non2xx } = await load(operation, ids);
  process.kill(pid, 'SIGUSR2');
  const cpuMs = ((cpuSeconds([pid]) - cpuBefore) * 1000) / Math.max(answered, 1);
  const profile = JSON.parse(await waitFor(join(dir, `${k + 1}.cpuprofile`))) as CpuProfile;
  console.log(`[profile] ${operation.name}: ${answered} answered, ${non2xx} not 2xx`);
  sections.push(
    [
      `## ${operation.name}`,
      '',
      `${round(answered / SECONDS)} answered/s, ${non2xx} not 2xx, service CPU ${round(cpuMs, 3)} ms per request.`,
      '',
      summaryMarkdown(summarize(profile)),
    ].join('\n'),
  );
}

const page = [
  `# Profile of the management service under bench:entities: ${label}`,
  '',
  `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on this 2-core machine (load average ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]} at the end) by \`npm run bench:profile -- ${label}\`:`,
  `${CONNECTIONS} connections, ${SECONDS} s per operation after a warm-up, V8's sampling profiler at 1 ms in the service process (docs/adr/0031-http-hot-path.md).`,
  '*Self*: time in the frame itself; *on the stack*: samples with the module anywhere in the stack (shares overlap). Shares of the samples in which the service was not idle.',
  '',
  ...sections.flatMap((s) => [s, '']),
].join('\n');
const out = new URL(`../docs/profiles/entities-${label}.md`, import.meta.url).pathname;
writeFileSync(out, page);
console.log(`[profile] written to docs/profiles/entities-${label}.md`);
await platform.stop();
