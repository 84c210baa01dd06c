// The figures of bench/entity-store.ts, as the JSON and the Markdown it records.
import { median, round, type Figures } from './harness.ts';

export type Measured = Figures & { cpu_ms: Record<string, number> };
export type Row = { operation: string; operationId: string; service: Measured[]; peer: Measured[]; plain: Measured[] };
type Erasure = { users: number; versions_per_user: number; erase_p50_ms: number; erase_p90_ms: number; erasures_per_s: number; patch_p50_ms: number };

/** The target of the service against the peer, and against a bare Express app on `/livez` (docs/adr/0031-http-hot-path.md). */
export const PEER_TARGET = 0.8;
export const LIVEZ_TARGET = 0.8;

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
/** Median CPU milliseconds per operation of each process group over the rounds. */
const cpuOf = (list: Measured[]) => Object.fromEntries(Object.keys(list[0]!.cpu_ms).map((k) => [k, median(list.map((f) => f.cpu_ms[k]!))]));
const cpuText = (cpu: Record<string, number>, ...names: string[]) => names.map((n) => cpu[n] ?? 0).join(' + ');
const figures = (list: Measured[]) => ({
  rps: median(list.map((f) => f.rps)),
  p50_ms: median(list.map((f) => f.p50_ms)),
  p99_ms: median(list.map((f) => f.p99_ms)),
  errors: sum(list.map((f) => f.errors)),
  cpu_ms: cpuOf(list),
});
const verdict = (ratio: number, target: number) => `${ratio}× ${ratio >= target ? 'met' : 'not met'}`;

export function entityStoreReport(input: {
  connections: number;
  seconds: number;
  rounds: number;
  rows: (Row & { serviceTrips: number; peerTrips: number; plainTrips: number })[];
  http: { server: string; rounds: Measured[] }[];
  erasure: Erasure;
}): { json: unknown; markdown: string } {
  const summary = input.rows.map((r) => {
    const service = { ...figures(r.service), round_trips: r.serviceTrips };
    const peer = { ...figures(r.peer), round_trips: r.peerTrips };
    const plain = { ...figures(r.plain), round_trips: r.plainTrips };
    return {
      operation: r.operation,
      service,
      peer,
      plain_pg: plain,
      vs_peer: round(service.rps / peer.rps),
      vs_plain_pg: round(service.rps / plain.rps),
      rounds: { service: r.service, peer: r.peer, plain_pg: r.plain },
    };
  });
  const http = input.http.map((h) => ({ ...h, ...figures(h.rounds) }));
  const livez = round(http[0]!.rps / http[1]!.rps);
  const missed = summary.filter((r) => r.vs_peer < PEER_TARGET).map((r) => r.operation);
  const markdown = [
    '### Entity store (`npm run bench:entities`)',
    '',
    `${input.connections} concurrent clients, ${input.rounds} alternating rounds of ${input.seconds} s each, medians; measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine.`,
    '- Service: HTTP through autocannon (JWT check, contract validation, row-level security, version row, outbox event, JSON access log line, span, metrics); requests not counted against a rate limit (bench:rate-limits measures that).',
    '- Peer (`bench/baselines/peer-express.ts`): the same operations as a competent team would write them by hand: Express 5, ES256 JWT check with jose (key cached), Ajv validation of the same request schema, the same entity and version rows plus an audit row, `where tenant_id = $1` in place of row-level security, JSON out; no outbox, idempotency, log, metrics or spans. The yardstick: **target service ≥ 0.8× the peer**.',
    '- Plain pg: a script writing and reading the same rows with `pg` (no HTTP, no checks, no event): the physical limit, not a target.',
    '- Round trips: per request, the service’s `http_request_database_round_trips` (a batch of statements sent together is one), the peer’s statements, the script’s own count.',
    '',
    '| operation | service req/s | p50 ms | p99 ms | round trips | CPU ms: service + Postgres + client | peer req/s | p50 ms | p99 ms | round trips | CPU ms: peer + Postgres + client | service / peer (target ≥ 0.8×) | plain pg ops/s | CPU ms: Postgres + client | service / plain pg |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...summary.map(
      (r) =>
        `| ${r.operation} | ${r.service.rps} | ${r.service.p50_ms} | ${r.service.p99_ms} | ${r.service.round_trips} | ${cpuText(r.service.cpu_ms, 'service', 'postgres', 'client')} ` +
        `| ${r.peer.rps} | ${r.peer.p50_ms} | ${r.peer.p99_ms} | ${r.peer.round_trips} | ${cpuText(r.peer.cpu_ms, 'peer', 'postgres', 'client')} | ${verdict(r.vs_peer, PEER_TARGET)} ` +
        `| ${r.plain_pg.rps} | ${cpuText(r.plain_pg.cpu_ms, 'postgres', 'client')} | ${r.vs_plain_pg}× |`,
    ),
    '',
    'CPU ms: CPU time per request (per operation) of the process that answers (service or peer), of Postgres (server and backends) and of the process that sends the load (autocannon, or the plain-pg script itself), medians over the rounds.',
    'Before each measurement after a write, the relay has sent every event and the tables written are vacuumed and analyzed (the same for every side).',
    '',
    'The HTTP stack alone, no database, in the same run:',
    '',
    '| server | req/s | p50 ms | p99 ms | CPU ms: server + client | service / this |',
    '|---|---|---|---|---|---|',
    ...http.map((h) => `| ${h.server} | ${h.rps} | ${h.p50_ms} | ${h.p99_ms} | ${cpuText(h.cpu_ms, 'service', 'client')} | ${round(http[0]!.rps / h.rps)}× |`),
    '',
    `Target service \`/livez\` ≥ ${LIVEZ_TARGET}× the bare Express 5 app: ${verdict(livez, LIVEZ_TARGET)}.`,
    '',
    'Where the time goes (CPU per request, all processes):',
    ...summary.map((r) => {
      const [service, peer, plain] = [r.service, r.peer, r.plain_pg].map((f) => round(sum(Object.values(f.cpu_ms)), 3));
      return `- ${r.operation}: ${service} ms (service ${r.service.cpu_ms.service}, Postgres ${r.service.cpu_ms.postgres}) against ${peer} ms for the peer (peer ${r.peer.cpu_ms.peer}, Postgres ${r.peer.cpu_ms.postgres}) and ${plain} ms for plain pg.`;
    }),
    `- \`GET /livez\`: the service ${http[0]!.cpu_ms.service} ms against ${http[1]!.cpu_ms.service} ms for the bare Express 5 app.`,
    `Errors or non-2xx answers: service ${sum(summary.map((r) => r.service.errors)) + http[0]!.errors}, peer ${sum(summary.map((r) => r.peer.errors))}, plain pg ${sum(summary.map((r) => r.plain_pg.errors))}.`,
    '',
    `Erasure (\`POST /users/{id}/erasure/\`, docs/adr/0059-personal-data-erasure.md): ${input.erasure.users} users of ${input.erasure.versions_per_user} versions each, erased one after another: median ${input.erasure.erase_p50_ms} ms (p90 ${input.erasure.erase_p90_ms} ms), ${input.erasure.erasures_per_s} erasures/s, against ${input.erasure.patch_p50_ms} ms for a PATCH of the same users.`,
    `Target service ≥ ${PEER_TARGET}× the peer: ${missed.length === 0 ? 'met on all three operations' : `not met (${missed.join(', ')})`}.`,
  ].join('\n');
  const json = {
    connections: input.connections,
    seconds: input.seconds,
    rounds: input.rounds,
    http,
    livez_vs_express: livez,
    results: summary,
    erasure: input.erasure,
  };
  return { json, markdown };
}
