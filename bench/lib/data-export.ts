// The universe export of bench:data, JSON and Arrow. (a) Server-side: the times the service reports for
// making each answer (Server-Timing): the whole (its DuckDB queries and the encoding, no HTTP)
// and the part spent waiting for DuckDB (queries, fetching results); the rest is the encoding.
// (b) The whole client path over HTTP: request → a decoded apache-arrow table, or → JSON.parse.
// (c) Each response coding: bytes on the wire, the time to compress the answer, and the client
// path with that Accept-Encoding.
import { loadavg } from 'node:os';
import { tableFromIPC } from 'apache-arrow';
import { availableCodings, compressWith, type ContentCoding } from '@platform/shared';
import { rawRequest } from '@platform/test-support/raw-http';
import { ARROW_TYPE, IDENTITY, JSON_TYPE, compareWithJson } from './data-queries.ts';
import { mb, type CodingRow } from './data-report.ts';
import { median, round } from './harness.ts';

export type ExportSettings = {
  url: string;
  universeQuery: string;
  headers: Record<string, string>;
  reps: number;
  codingReps: number;
  instruments: number;
  check: (ok: boolean, what: string) => void;
  log: (line: string) => void;
};

export async function measureUniverseExport(settings: ExportSettings) {
  const { url, universeQuery, headers, reps: REPS, codingReps: CODING_REPS, instruments: INSTRUMENTS, check, log } = settings;
  const timed = async <T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> => {
    const started = performance.now();
    const value = await work();
    return { ms: performance.now() - started, value };
  };
  const universeUrl = `${url}/data/reference/universe/${universeQuery}`;
  /** The service's own times for the answer (Server-Timing), and the answer. */
  const serverSide = async (format: 'json' | 'arrow'): Promise<{ ms: number; queryMs: number; bytes: Uint8Array }> => {
    const res = await fetch(universeUrl, { headers: { ...headers, ...IDENTITY, accept: format === 'json' ? JSON_TYPE : ARROW_TYPE } });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const timing = /^answer;dur=([\d.]+), query;dur=([\d.]+)$/.exec(res.headers.get('server-timing') ?? '');
    if (res.status !== 200 || !timing) throw new Error(`universe export: ${res.status} ${res.headers.get('server-timing')}`);
    return { ms: Number(timing[1]), queryMs: Number(timing[2]), bytes };
  };

  // Check: the Arrow answer holds every value of the JSON answer.
  const exportJson = (await serverSide('json')).bytes;
  const exportArrow = (await serverSide('arrow')).bytes;
  const exportTable = tableFromIPC(exportArrow);
  const mismatches = compareWithJson(exportTable, JSON.parse(Buffer.from(exportJson).toString('utf8')) as { data: Record<string, Record<string, unknown>> });
  check(
    mismatches === 0,
    `universe export: the Arrow answer's ${exportTable.numRows} rows × ${exportTable.numCols} columns equal the JSON answer value for value (${mismatches} differ)`,
  );

  // The machine's 1-minute load average around these rounds: it is shared, and the ratios move with it.
  const loadBefore = loadavg()[0]!;
  log(`server-side universe export: JSON and Arrow, 2 warm-up and ${REPS} measured rounds`);
  const server = { json: [] as number[], jsonQuery: [] as number[], arrow: [] as number[], arrowQuery: [] as number[], arrowEncoding: [] as number[] };
  for (let i = 0; i < REPS + 2; i++) {
    const j = await serverSide('json');
    const a = await serverSide('arrow');
    if (i < 2) continue;
    server.json.push(j.ms);
    server.jsonQuery.push(j.queryMs);
    server.arrow.push(a.ms);
    server.arrowQuery.push(a.queryMs);
    server.arrowEncoding.push(a.ms - a.queryMs);
  }

  /** Request → decoded: a table for Arrow, parsed JSON; the answer asked for with `coding` (identity: none). */
  const clientPath = (format: 'json' | 'arrow', coding: ContentCoding | 'identity' = 'identity') =>
    timed(async () => {
      const res = await fetch(universeUrl, { headers: { ...headers, accept: format === 'json' ? JSON_TYPE : ARROW_TYPE, 'accept-encoding': coding } });
      if (res.status !== 200) throw new Error(`universe export: ${res.status}`);
      if (format === 'json') return Object.keys((JSON.parse(await res.text()) as { data: object }).data).length;
      return tableFromIPC(new Uint8Array(await res.arrayBuffer())).numRows;
    });
  log(`client path of the universe export: JSON and Arrow, 2 warm-up and ${REPS} measured rounds`);
  const client = { json: [] as number[], arrow: [] as number[] };
  for (let i = 0; i < REPS + 2; i++) {
    const j = await clientPath('json');
    const a = await clientPath('arrow');
    if (i === 0)
      check(j.value === INSTRUMENTS && a.value === INSTRUMENTS, `client path: JSON.parse finds ${j.value} instruments, tableFromIPC ${a.value} rows`);
    if (i < 2) continue;
    client.json.push(j.ms);
    client.arrow.push(a.ms);
  }

  const loadAfter = loadavg()[0]!;
  log(`response codings of the universe export (${availableCodings.join(', ')}), ${CODING_REPS} measured rounds each`);
  const codingRows: CodingRow[] = [];
  for (const format of ['json', 'arrow'] as const) {
    const plain = Buffer.from(format === 'json' ? exportJson : exportArrow);
    for (const coding of ['identity', 'gzip', 'br', 'zstd'] as const) {
      const row: CodingRow = { format: format === 'json' ? 'JSON' : 'Arrow', coding, available: coding === 'identity' || availableCodings.includes(coding) };
      codingRows.push(row);
      if (!row.available) continue;
      const wire = await rawRequest(universeUrl, { headers: { ...headers, accept: format === 'json' ? JSON_TYPE : ARROW_TYPE, 'accept-encoding': coding } });
      check(
        (wire.headers['content-encoding'] ?? 'identity') === coding,
        `${row.format} asked as ${coding}: answered ${wire.headers['content-encoding'] ?? 'identity'}, ${mb(wire.bytes.length)}`,
      );
      row.bytes = wire.bytes.length;
      const compress: number[] = [];
      const path: number[] = [];
      await clientPath(format, coding);
      for (let i = 0; i < CODING_REPS; i++) {
        if (coding !== 'identity') compress.push((await timed(() => compressWith(coding, plain))).ms);
        path.push((await clientPath(format, coding)).ms);
      }
      row.compress_ms = coding === 'identity' ? 0 : round(median(compress), 1);
      row.client_ms = round(median(path), 1);
    }
  }

  return { exportJson, exportArrow, server, client, loadBefore, loadAfter, codingRows };
}
