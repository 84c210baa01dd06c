// The cost of metrics and trace context per request: GET /portfolios/{id} (token check, contract
// validation, one read with row-level security, a JSON log line) through autocannon, once without
// a traceparent and once with one, with the service's CPU time per request (user + system, from
// /proc: less sensitive than the rate to other work on the machine).
// `npx tsx bench/observability.ts` (BENCH_SECONDS, BENCH_CONNECTIONS).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { round, startBenchPlatform } from './lib/harness.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

const platform = await startBenchPlatform();
/** CPU seconds the management service (this process's child) has used so far. */
const servicePid = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
  .split('\n')
  .find((line) => line.includes('management-service/src/main.ts'))!
  .trim()
  .split(' ')[0]!;
const cpuSeconds = () => {
  const fields = readFileSync(`/proc/${servicePid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
try {
  const headers = { authorization: `Bearer ${platform.token}`, 'content-type': 'application/json' };
  const user = await fetch(`${platform.managementUrl}/users/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ first_name: 'A', last_name: 'B', email: 'a@example.com' }),
  });
  const userId = ((await user.json()) as { id: string }).id;
  const created = await fetch(`${platform.managementUrl}/portfolios/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: 'Pension',
      owned_by_user_id: userId,
      base_currency: 'EUR',
      money_type: 'REAL_MONEY',
      config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
    }),
  });
  const id = ((await created.json()) as { id: string }).id;
  const run = async (extra: Record<string, string>) => {
    const cpu = cpuSeconds();
    const result = await autocannon({
      url: `${platform.managementUrl}/portfolios/${id}`,
      connections: CONNECTIONS,
      duration: SECONDS,
      headers: { ...headers, ...extra },
    });
    const requests = result.requests.total;
    return {
      rps: round(result.requests.average),
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      cpu_us_per_request: round(((cpuSeconds() - cpu) * 1e6) / requests, 0),
      errors: result.errors + result.non2xx,
    };
  };
  await run({}); // warm-up
  const plain = await run({});
  const traced = await run({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
  console.log(JSON.stringify({ connections: CONNECTIONS, seconds: SECONDS, plain, traced }));
} finally {
  await platform.stop();
}
