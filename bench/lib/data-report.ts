// The Markdown of bench:data's figures, as docs/benchmarks.md shows them.
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
  const met = (ratio: number) => (ratio >= 3 ? 'met' : '**not met**');
  const targets: Record<string, string> = {
    [figures.refArrow.name]: `≤ 1.5×: ${figures.arrowRatio <= 1.5 ? 'met' : '**not met**'}`,
    [figures.cases.at(-1)!.name]: `≤ 1.5×: ${figures.searchRatio <= 1.5 ? 'met' : '**not met**'}`,
  };

  return [
    '### Data service (`npm run bench:data`)',
    '',
    `Generated universe: ${figures.instruments.toLocaleString('en')} instruments (${figures.sample.stocks.toLocaleString('en')} stocks, ${figures.sample.bonds.toLocaleString('en')} bonds, ${figures.sample.etfs.toLocaleString('en')} ETFs), ${figures.years} years of daily prices (${figures.sample.prices.toLocaleString('en')} rows, the fewest years that fill every factor metric); generating it into a reference file took ${figures.generationSeconds} s.`,
    `Single client, sequential: ${figures.reps} measured calls per case after 2 warm-up calls (cold X-Ray: ${figures.coldReps}, each the first call of a new tenant), service and direct alternating; medians and p90; measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine.`,
    'Service: the data service in its own process over HTTP (`fetch`, API key, contract validation, the answer read to its last byte). Direct (the limit): the same query written by hand and run in the bench process on a read-only DuckDB instance of the same reference file, every row read into JS (`runAndReadAll` + `getRows`), no HTTP and no encoding; the column after it is the time until `runAndReadAll` returned (query run, result chunks fetched, before converting them to JS values).',
    '',
    '| case | service median ms | p90 ms | bytes | direct median ms | of which the query, before JS values | service / direct | target met? |',
    '|---|---|---|---|---|---|---|---|',
    ...figures.results.map(
      (r) =>
        `| ${r.case} | ${r.service_median_ms} | ${r.service_p90_ms} | ${mb(r.bytes)} | ${r.direct_median_ms} | ${r.direct_query_median_ms} | ${r.ratio}× | ${targets[r.case] ?? '—'} |`,
    ),
    '',
    `Reference query of ${figures.queryIsins.toLocaleString('en')} ISINs, JSON time / Arrow time: ${figures.arrowOverJson} (target: Arrow ≥ 3× faster than JSON, ${figures.arrowOverJson >= 3 ? 'met' : '**not met**'}); Arrow / direct DuckDB: ${figures.arrowRatio}× (target ≤ 1.5×: ${figures.arrowRatio <= 1.5 ? 'met' : '**not met**'}), ${round(median(figures.refArrow.service) / median(figures.refArrow.directQuery))}× of the direct query before its rows become JS values.`,
    `Decoding in the client, once: \`tableFromIPC\` of the Arrow answer ${round(figures.arrowDecodeMs, 1)} ms (${figures.table.numRows.toLocaleString('en')} rows), \`JSON.parse\` of the JSON answer ${round(figures.jsonDecodeMs, 1)} ms.`,
    `Smart search finds ${figures.found.length.toLocaleString('en')} instruments; its direct query computes only the VALUE stars the filter reads. The X-Ray direct query computes all 8 factors, without a cache.`,
    '',
    `#### Universe export GLOBAL (${figures.instruments.toLocaleString('en')} rows × ${figures.fields.length} fields): Arrow against JSON`,
    '',
    `Server-side: the times the service reports for making each answer (\`Server-Timing: answer;dur=…, query;dur=…\`: the whole, its DuckDB queries and the JSON or Arrow encoding, no HTTP and no compression; and the part spent waiting for DuckDB), JSON and Arrow alternating, ${figures.reps} rounds after 2 warm-up rounds. Client path: \`fetch\` of the service over HTTP to a decoded table (\`tableFromIPC\`, apache-arrow; it decodes strings when they are read) or to \`JSON.parse\` of the text, no response coding, alternating, ${figures.reps} rounds. The machine's 1-minute load average went from ${round(figures.loadBefore, 1)} to ${round(figures.loadAfter, 1)} during these rounds (2 cores, shared with other work).`,
    '',
    '| what | JSON median ms | Arrow median ms | JSON / Arrow | target |',
    '|---|---|---|---|---|',
    `| server-side answer (DuckDB queries + encoding) | ${round(median(figures.server.json), 1)} | ${round(median(figures.server.arrow), 1)} | ${figures.serverRatio}× | ≥ 3×: ${met(figures.serverRatio)} |`,
    `| of which waiting for DuckDB (queries, fetching results) | ${round(median(figures.server.jsonQuery), 1)} | ${round(median(figures.server.arrowQuery), 1)} | — | — |`,
    `| the JSON answer against the Arrow encoding alone (the Arrow answer less its waits for DuckDB) | ${round(median(figures.server.json), 1)} | ${round(median(figures.server.arrowEncoding), 1)} | ${figures.encodingRatio}× | ≥ 3×: ${met(figures.encodingRatio)} |`,
    `| client path: request → decoded table / parsed JSON | ${round(median(figures.client.json), 1)} | ${round(median(figures.client.arrow), 1)} | ${figures.clientRatio}× | ≥ 3×: ${met(figures.clientRatio)} |`,
    '',
    `The target reads two ways: the whole Arrow answer against the whole JSON answer (first row), or the Arrow encoding against the JSON answer (third row). The Arrow answer waits ${round(median(figures.server.arrowQuery), 1)} ms for DuckDB (its semi-join and sort of the ${figures.instruments.toLocaleString('en')} rows and the ${Math.ceil(figures.instruments / 2048)} result chunks, each fetched by one asynchronous call, the next while the current one is copied), ${round((100 * median(figures.server.arrowQuery)) / median(figures.server.arrow))} % of it${
      figures.serverRatio >= 3
        ? ''
        : `: an encoding that cost nothing would leave the whole answers at ${round(median(figures.server.json) / median(figures.server.arrowQuery))}× (JSON answer / Arrow waits), which is what limits the first reading`
    }. The encoding copies the chunks' vectors into Arrow buffers (strings in runs, categories into dictionaries, no JS value per cell) and writes the IPC stream. Answer sizes: JSON ${mb(figures.exportJson.byteLength)}, Arrow ${mb(figures.exportArrow.byteLength)} (categories dictionary-encoded).`,
    '',
    `Response codings of the same export (Node.js ${process.version}; levels: gzip 1, br quality 1, zstd 1): bytes on the wire, median time to compress the answer (the service does it per request), and the client path with that Accept-Encoding (decompression by \`fetch\` included), ${figures.codingReps} rounds each.`,
    '',
    '| answer | coding | bytes | of identity | compress ms | client path ms |',
    '|---|---|---|---|---|---|',
    ...figures.codingRows.map((r) => {
      if (!r.available) return `| ${r.format} | ${r.coding} | not in Node.js ${process.version} | — | — | — |`;
      const identity = figures.codingRows.find((x) => x.format === r.format && x.coding === 'identity')!.bytes!;
      return `| ${r.format} | ${r.coding} | ${mb(r.bytes!)} | ${round((100 * r.bytes!) / identity)} % | ${r.compress_ms} | ${r.client_ms} |`;
    }),
    '',
    `Checks (each answer against the direct query): ${figures.checks.join('; ')}.`,
  ].join('\n');
}
