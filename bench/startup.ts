// Start time and memory of the services run from their TypeScript through tsx against the compiled
// build as production runs it (docs/adr/0045-compiled-build.md), and what the build itself costs.
// Each service is started BENCH_STARTUP_RUNS times (5) in each mode, the modes alternating (which
// goes first swaps each round), after one start of each not counted: spawn → /readyz answering,
// resident memory once ready and after BENCH_LIVEZ_REQUESTS (200) sequential GET /livez. Postgres
// and NATS are started once through the dev stack; the data service attaches a small sample
// reference file and gets a new DuckDB file each start, as a new replica would.
// `npm run bench:startup`.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSample } from '@platform/data-service/sample/generate';
import { buildReferenceFile } from '@platform/data-service/store/reference-files';
import { freePort } from '@platform/dev-stack/ports';
import { startStack } from '@platform/dev-stack/stack';
import { measureBuild, measureBundle } from './lib/build-times.ts';
import { median, record } from './lib/harness.ts';
import { startOnce, type Mode, type Service, type StartFigures } from './lib/service-start.ts';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);
const LIVEZ_REQUESTS = Number(process.env.BENCH_LIVEZ_REQUESTS ?? 200);
const root = fileURLToPath(new URL('../', import.meta.url));
const log = (line: string) => console.log(`[bench] ${line}`);

log('npm run build: from nothing, then again with nothing changed');
const build = measureBuild(root);
log(`build: ${build.cold_s} s cold, ${build.incremental_s} s incremental`);
const bundle = measureBundle(root);
log(`esbuild bundle of the management service: ${bundle.build_s} s, ${bundle.bytes} bytes`);

const work = mkdtempSync(join(tmpdir(), 'platform-bench-startup-'));
chmodSync(work, 0o755);
const stack = await startStack({
  log,
  postgres: { embedded: { dir: join(work, 'pg'), port: await freePort(), persistent: false } },
  database: { name: 'platform' },
  migrate: true,
  poolMax: 1,
  nats: { own: { port: await freePort(), dir: join(work, 'nats'), name: 'platform-bench-startup' } },
});
type Series = Record<Mode, StartFigures[]>;
const figures: Record<Service, Series> = { 'management-service': { tsx: [], compiled: [] }, 'data-service': { tsx: [], compiled: [] } };
try {
  const referenceDir = join(work, 'reference');
  await buildReferenceFile(referenceDir, 'sample', (conn) => generateSample(conn, { instruments: 1000, years: 5, seed: 42, endDate: '2026-11-20' }));
  const env = (service: Service, start: number): Record<string, string> =>
    service === 'management-service'
      ? { DATABASE_URL: stack.databaseUrl, NATS_URL: stack.serviceNatsUrls.management, JWT_PRIVATE_KEY: stack.signingKey, MIGRATE_ON_START: 'false' }
      : {
          DATABASE_URL: stack.databaseUrl,
          NATS_URL: stack.serviceNatsUrls.data,
          DUCKDB_PATH: join(work, `data-${start}.duckdb`),
          REFERENCE_DIR: referenceDir,
          REFERENCE_RELOAD_MS: '0',
        };
  let start = 0;
  for (let round = -1; round < RUNS; round++) {
    const order: Mode[] = round % 2 === 0 ? ['tsx', 'compiled'] : ['compiled', 'tsx'];
    for (const service of ['management-service', 'data-service'] as const) {
      for (const mode of order) {
        const result = await startOnce({ root, service, mode, env: env(service, start++), livezRequests: LIVEZ_REQUESTS });
        if (round >= 0) figures[service][mode].push(result);
        log(
          `${round < 0 ? 'warm-up ' : `round ${round + 1}: `}${service} ${mode}: ready in ${result.ready_ms} ms (${result.cpu_ready_s} s CPU), ${result.rss_ready_mb} MB → ${result.rss_after_livez_mb} MB`,
        );
      }
    }
  }
} finally {
  await stack.stop();
  rmSync(work, { recursive: true, force: true });
}

const summary = (series: StartFigures[]) => ({
  ready_ms_median: median(series.map((f) => f.ready_ms)),
  cpu_ready_s_median: median(series.map((f) => f.cpu_ready_s)),
  rss_ready_mb_median: median(series.map((f) => f.rss_ready_mb)),
  rss_after_livez_mb_median: median(series.map((f) => f.rss_after_livez_mb)),
  runs: series,
});
const services = Object.fromEntries(
  Object.entries(figures).map(([service, series]) => [service, { tsx: summary(series.tsx), compiled: summary(series.compiled) }]),
) as Record<Service, Record<Mode, ReturnType<typeof summary>>>;

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
const rows = (Object.keys(services) as Service[]).map((service) => {
  const { tsx, compiled } = services[service];
  return (
    `| ${service} | ${tsx.ready_ms_median} ms | ${compiled.ready_ms_median} ms (${ratio(compiled.ready_ms_median, tsx.ready_ms_median)}) | ` +
    `${tsx.cpu_ready_s_median} s | ${compiled.cpu_ready_s_median} s (${ratio(compiled.cpu_ready_s_median, tsx.cpu_ready_s_median)}) | ` +
    `${tsx.rss_ready_mb_median} MB | ${compiled.rss_ready_mb_median} MB | ${tsx.rss_after_livez_mb_median} MB | ${compiled.rss_after_livez_mb_median} MB |`
  );
});
const markdown = [
  `### Start time and memory: tsx against the compiled build (\`bench:startup\`, ${new Date().toISOString().slice(0, 10)})`,
  '',
  `Medians of ${RUNS} starts of each service in each mode, alternating, on Node ${process.versions.node}: spawn → \`/readyz\` answering, resident memory once ready and after ${LIVEZ_REQUESTS} \`GET /livez\`. tsx: \`node --import tsx <service>/src/main.ts\`; compiled: \`node --conditions=compiled --enable-source-maps <service>/dist/main.js\`.`,
  '',
  '| service | ready, tsx | ready, compiled | CPU until ready, tsx | CPU until ready, compiled | RSS ready, tsx | RSS ready, compiled | RSS after /livez, tsx | RSS after /livez, compiled |',
  '|---|---|---|---|---|---|---|---|---|',
  ...rows,
  '',
  `\`npm run build\` (five packages by \`tsc -b\`, the grammars, the console by Vite): ${build.cold_s} s from nothing, ${build.incremental_s} s with nothing changed; ${build.dist_files} files, ${(build.dist_bytes / 1e6).toFixed(1)} MB in the packages' \`dist/\`. One esbuild bundle of the management service (packages outside it): ${bundle.build_s} s, ${(bundle.bytes / 1e3).toFixed(0)} kB (docs/adr/0045-compiled-build.md says why it was not chosen).`,
].join('\n');
record(
  'startup',
  { date: new Date().toISOString(), node: process.versions.node, runs: RUNS, livez_requests: LIVEZ_REQUESTS, build, esbuild_bundle: bundle, services },
  markdown,
);
