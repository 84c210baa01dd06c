// The Markdown of bench:data's figures, as the README shows them.
import { median, round } from './harness.ts';

export type CodingRow = { format: 'JSON' | 'Arrow'; coding: string; available: boolean; bytes?: number; compress_ms?: number; client_ms?: number };

export type CaseFigures = {
  case: string;
  service_median_ms: number;
  service_p90_ms: number;
  bytes: number;
  direct_median_ms: number;
  direct_p90_ms: number;
  direct_query_median_ms: number;
  ratio: number;
  ratio_to_query: number;
  service_ms: number[];
  direct_ms: number[];
};

export type DataFigures = {
  instruments: number;
  sample: { stocks: number; bonds: number; etfs: number; prices: number };
  years: number;
  generationSeconds: number;
  reps: number;
  coldReps: number;
  results: CaseFigures[];
  queryIsins: number;
  arrowOverJson: number;
  arrowRatio: number;
  refArrow: { name: string; service: number[]; directQuery: number[] };
  searchRatio: number;
  cases: { name: string }[];
  arrowDecodeMs: number;
  table: { numRows: number };
  jsonDecodeMs: number;
  found: unknown[];
  fields: string[];
  loadBefore: number;
  loadAfter: number;
  server: { json: number[]; jsonQuery: number[]; arrow: number[]; arrowQuery: number[]; arrowEncoding: number[] };
  client: { json: number[]; arrow: number[] };
  serverRatio: number;
  encodingRatio: number;
  clientRatio: number;
  exportJson: Uint8Array;
  exportArrow: Uint8Array;
  codingReps: number;
  codingRows: CodingRow[];
  checks: string[];
};

export const mb = (n: number) => (n >= 1e6 ? `${round(n / 1e6, 2)} MB` : `${round(n / 1e3, 1)} kB`);

export function dataMarkdown(figures: DataFigures): string {
  const {
    instruments: INSTRUMENTS,
    sample,
    years: YEARS,
    generationSeconds,
    reps: REPS,
    coldReps: COLD_REPS,
    results,
    queryIsins: QUERY_ISINS,
    arrowOverJson,
    arrowRatio,
    refArrow,
    searchRatio,
    cases,
    arrowDecodeMs,
    table,
    jsonDecodeMs,
    found,
    fields: FIELDS,
    loadBefore,
    loadAfter,
    server,
    client,
    serverRatio,
    encodingRatio,
    clientRatio,
    exportJson,
    exportArrow,
    codingReps: CODING_REPS,
    codingRows,
    checks,
  } = figures;
  const met = (ratio: number) => (ratio >= 3 ? 'met' : '**not met**');
  const targets: Record<string, string> = {
    [refArrow.name]: `≤ 1.5×: ${arrowRatio <= 1.5 ? 'met' : '**not met**'}`,
    [cases.at(-1)!.name]: `≤ 1.5×: ${searchRatio <= 1.5 ? 'met' : '**not met**'}`,
  };

  return [
    '### Data service (`npm run bench:data`)',
    '',
    `Generated universe: ${INSTRUMENTS.toLocaleString('en')} instruments (${sample.stocks.toLocaleString('en')} stocks, ${sample.bonds.toLocaleString('en')} bonds, ${sample.etfs.toLocaleString('en')} ETFs), ${YEARS} years of daily prices (${sample.prices.toLocaleString('en')} rows, the fewest years that fill every factor metric); generating it into a reference file took ${generationSeconds} s.`,
    `Single client, sequential: ${REPS} measured calls per case after 2 warm-up calls (cold X-Ray: ${COLD_REPS}, each the first call of a new tenant), service and direct alternating; medians and p90; measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine.`,
    'Service: the data service in its own process over HTTP (`fetch`, API key, contract validation, the answer read to its last byte). Direct (the limit): the same query written by hand and run in the bench process on a read-only DuckDB instance of the same reference file, every row read into JS (`runAndReadAll` + `getRows`), no HTTP and no encoding; the column after it is the time until `runAndReadAll` returned (query run, result chunks fetched, before converting them to JS values).',
    '',
    '| case | service median ms | p90 ms | bytes | direct median ms | of which the query, before JS values | service / direct | target met? |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.case} | ${r.service_median_ms} | ${r.service_p90_ms} | ${mb(r.bytes)} | ${r.direct_median_ms} | ${r.direct_query_median_ms} | ${r.ratio}× | ${targets[r.case] ?? '—'} |`,
    ),
    '',
    `Reference query of ${QUERY_ISINS.toLocaleString('en')} ISINs, JSON time / Arrow time: ${arrowOverJson} (target: Arrow ≥ 3× faster than JSON, ${arrowOverJson >= 3 ? 'met' : '**not met**'}); Arrow / direct DuckDB: ${arrowRatio}× (target ≤ 1.5×: ${arrowRatio <= 1.5 ? 'met' : '**not met**'}), ${round(median(refArrow.service) / median(refArrow.directQuery))}× of the direct query before its rows become JS values.`,
    `Decoding in the client, once: \`tableFromIPC\` of the Arrow answer ${round(arrowDecodeMs, 1)} ms (${table.numRows.toLocaleString('en')} rows), \`JSON.parse\` of the JSON answer ${round(jsonDecodeMs, 1)} ms.`,
    `Smart search finds ${found.length.toLocaleString('en')} instruments; its direct query computes only the VALUE stars the filter reads. The X-Ray direct query computes all 8 factors, without a cache.`,
    '',
    `#### Universe export GLOBAL (${INSTRUMENTS.toLocaleString('en')} rows × ${FIELDS.length} fields): Arrow against JSON`,
    '',
    `Server-side: the times the service reports for making each answer (\`Server-Timing: answer;dur=…, query;dur=…\`: the whole, its DuckDB queries and the JSON or Arrow encoding, no HTTP and no compression; and the part spent waiting for DuckDB), JSON and Arrow alternating, ${REPS} rounds after 2 warm-up rounds. Client path: \`fetch\` of the service over HTTP to a decoded table (\`tableFromIPC\`, apache-arrow; it decodes strings when they are read) or to \`JSON.parse\` of the text, no response coding, alternating, ${REPS} rounds. The machine's 1-minute load average went from ${round(loadBefore, 1)} to ${round(loadAfter, 1)} during these rounds (2 cores, shared with other work).`,
    '',
    '| what | JSON median ms | Arrow median ms | JSON / Arrow | target |',
    '|---|---|---|---|---|',
    `| server-side answer (DuckDB queries + encoding) | ${round(median(server.json), 1)} | ${round(median(server.arrow), 1)} | ${serverRatio}× | ≥ 3×: ${met(serverRatio)} |`,
    `| of which waiting for DuckDB (queries, fetching results) | ${round(median(server.jsonQuery), 1)} | ${round(median(server.arrowQuery), 1)} | — | — |`,
    `| the JSON answer against the Arrow encoding alone (the Arrow answer less its waits for DuckDB) | ${round(median(server.json), 1)} | ${round(median(server.arrowEncoding), 1)} | ${encodingRatio}× | ≥ 3×: ${met(encodingRatio)} |`,
    `| client path: request → decoded table / parsed JSON | ${round(median(client.json), 1)} | ${round(median(client.arrow), 1)} | ${clientRatio}× | ≥ 3×: ${met(clientRatio)} |`,
    '',
    `The target reads two ways: the whole Arrow answer against the whole JSON answer (first row), or the Arrow encoding against the JSON answer (third row). The Arrow answer waits ${round(median(server.arrowQuery), 1)} ms for DuckDB (its semi-join and sort of the ${INSTRUMENTS.toLocaleString('en')} rows and the ${Math.ceil(INSTRUMENTS / 2048)} result chunks, each fetched by one asynchronous call, the next while the current one is copied), ${round((100 * median(server.arrowQuery)) / median(server.arrow))} % of it${
      serverRatio >= 3
        ? ''
        : `: an encoding that cost nothing would leave the whole answers at ${round(median(server.json) / median(server.arrowQuery))}× (JSON answer / Arrow waits), which is what limits the first reading`
    }. The encoding copies the chunks' vectors into Arrow buffers (strings in runs, categories into dictionaries, no JS value per cell) and writes the IPC stream. Answer sizes: JSON ${mb(exportJson.byteLength)}, Arrow ${mb(exportArrow.byteLength)} (categories dictionary-encoded).`,
    '',
    `Response codings of the same export (Node.js ${process.version}; levels: gzip 1, br quality 1, zstd 1): bytes on the wire, median time to compress the answer (the service does it per request), and the client path with that Accept-Encoding (decompression by \`fetch\` included), ${CODING_REPS} rounds each.`,
    '',
    '| answer | coding | bytes | of identity | compress ms | client path ms |',
    '|---|---|---|---|---|---|',
    ...codingRows.map((r) => {
      if (!r.available) return `| ${r.format} | ${r.coding} | not in Node.js ${process.version} | — | — | — |`;
      const identity = codingRows.find((x) => x.format === r.format && x.coding === 'identity')!.bytes!;
      return `| ${r.format} | ${r.coding} | ${mb(r.bytes!)} | ${round((100 * r.bytes!) / identity)} % | ${r.compress_ms} | ${r.client_ms} |`;
    }),
    '',
    `Checks (each answer against the direct query): ${checks.join('; ')}.`,
  ].join('\n');
}
