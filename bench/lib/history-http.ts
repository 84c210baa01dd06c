// The whole portfolio history over HTTP: `GET /portfolios/{id}/history/` of a portfolio with 200
// versions and 130 cash moves in Postgres, spread over ten years, through the management service
// (its Postgres reads and the request over NATS) and the data service (DuckDB reads, calculator),
// as separate processes (docs/adr/0058-portfolio-history.md). Used by bench/history.ts.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuckStore, type DuckStore } from '@platform/data-service/store/duckdb';
import { createAccessKey, createTenant } from '@platform/management-service/admin/provisioning';
import { backdatePortfolio } from '@platform/test-support/backdate';
import { build } from '@platform/test-support/fixtures';
import { seededRandom } from '@platform/test-support/random';
import { buildHistoryReference, pickHistoryInstruments } from './history-responder.ts';
import { startStack } from './stack.ts';

export type HttpRun = {
  /** Request to the last byte of the body as this client sees it, one request at a time. */
  json_ms: number[];
  arrow_ms: number[];
  /** The same requests as the management service's access log times them: request in to answer out. */
  json_server_ms: number[];
  arrow_server_ms: number[];
  points: number;
  versions: number;
  cash_moves: number;
  json_bytes: number;
  arrow_bytes: number;
  from: string;
  to: string;
  /** The JSON answer's points. */
  points_shown: { value: number; twr: number; drawdown: number }[];
  /** The same portfolio and market data as the numpy baseline reads them (bench/baselines/history.py). */
  baseline_case: NumpyCase;
};

/** The input of bench/baselines/history.py: closes and rates without gaps on the answer's days. */
export type NumpyCase = {
  days: number[];
  closes: number[][];
  currencies: string[];
  fx: Record<string, number[]>;
  columns: string[];
  versions: { day: number; units: number[] }[];
  flows: { day: number; amount: number; currency: string }[];
};

const VERSIONS = 200;
const CASH_MOVES = 130;
const DAY_MS = 86_400_000;
const ARROW = 'application/vnd.apache.arrow.stream';

/** The closes of `chosen` and the USD rates, by day (since 1970-01-01), from a month before `from` to `to`. */
async function readMarket(duck: DuckStore, chosen: { isin: string }[], from: string, to: string) {
  return duck.use(async ({ conn, ref }) => {
    const byDay = (rows: unknown[][]) => new Map(rows.map(([day, x]) => [Number(day), Number(x)]));
    const closes = new Map<string, Map<number, number>>();
    for (const { isin } of chosen) {
      const rows = await conn.runAndReadAll(
        `select (date - date '1970-01-01')::integer, close::double from ${ref}.prices where isin = $1 and close > 0 and date between $2::date - 31 and $3::date`,
        [isin, from, to],
      );
      closes.set(isin, byDay(rows.getRows()));
    }
    const usd = await conn.runAndReadAll(
      `select (date - date '1970-01-01')::integer, rate::double from ${ref}.fx_rates where currency = 'USD' and date between $1::date - 31 and $2::date`,
      [from, to],
    );
    return { closes, usd: byDay(usd.getRows()) };
  });
}

/** The value of the last day on or before `day` that has one, as the history carries a close or rate. */
function lastOnOrBefore(series: Map<number, number>, day: number): number {
  for (let d = day; d > day - 31; d--) if (series.has(d)) return series.get(d)!;
  throw new Error(`nothing in the month before day ${day}`);
}

export async function measureHistoryHttp(options: { reps: number; warmup: number; log: (line: string) => void }): Promise<HttpRun> {
  const { log } = options;
  const work = mkdtempSync(join(tmpdir(), 'platform-bench-history-http-'));
  const referenceDir = join(work, 'reference');
  try {
    log('HTTP: generating the reference file, then starting Postgres, NATS and both services');
    await buildHistoryReference(referenceDir);
    const duck = await openDuckStore({ path: join(work, 'pick.duckdb'), referenceDir });
    const { chosen, from, to, market } = await pickHistoryInstruments(duck)
      .then(async (picked) => ({ ...picked, market: await readMarket(duck, picked.chosen, picked.from, picked.to) }))
      .finally(() => duck.close());
    // The access log (info) says how long the service took for each request: the server-side time.
    const stack = await startStack({ log, management: { LOG_LEVEL: 'info' }, data: { REFERENCE_DIR: referenceDir, OPTIMIZER: 'false' } });
    try {
      const tenantId = 'bench';
      await createTenant(stack.db, { id: tenantId });
      const key = await createAccessKey(stack.db, tenantId);
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${stack.managementUrl}${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
        return JSON.parse(text) as { id: string; access_token: string };
      };
      let token = '';
      token = (await call('POST', '/auth/login/', key)).access_token;

      log(`HTTP: writing a portfolio of ${VERSIONS} versions and ${CASH_MOVES} cash moves through the interface`);
      const owner = (await call('POST', '/users/', build.user())).id;
      const weights = Object.fromEntries(chosen.map(({ isin }) => [isin, 0.045]));
      const policy = (await call('POST', '/policies/', build.policy({ config: { model_portfolio: weights, asset_class_bands: {} } }))).id;
      const account = { brokerage_account: { bank_account_type: 'IBAN', bank_account_number: 'DE89370400440532013000' } };
      const portfolioId = (await call('POST', '/portfolios/', build.roboPortfolio(owner, { policy_id: policy }, account))).id;
      const random = seededRandom(7);
      for (let k = 1; k < VERSIONS; k++) {
        // Cash moves before about two thirds of the changes: each is dated on the next version's day.
        if (k <= CASH_MOVES) {
          const withdrawal = k % 13 === 0;
          await call('POST', `/portfolios/${portfolioId}/transactions/`, {
            ...build.transaction({ quantity: withdrawal ? '-2500.00' : '1000.00', currency: k % 26 === 0 ? 'USD' : 'EUR' }),
            datetime: new Date().toISOString(),
          });
        }
        const holdings: Record<string, number> = { $EUR: Math.round(2_000_000 * random()) / 100, $USD: Math.round(500_000 * random()) / 100 };
        for (const { isin } of chosen) if (random() < 0.85) holdings[isin] = Math.round((10 + 500 * random()) * 10_000) / 10_000;
        await call('PATCH', `/portfolios/${portfolioId}`, { portfolio: holdings });
      }
      const first = Math.floor(Date.parse(`${from}T00:00:00Z`) / DAY_MS);
      const last = Math.floor(Date.parse(`${to}T00:00:00Z`) / DAY_MS);
      const versionDays = [first, ...Array.from({ length: VERSIONS - 1 }, () => first + 1 + Math.floor(random() * (last - first)))].sort((a, b) => a - b);
      const dated = await backdatePortfolio(stack.db, tenantId, portfolioId, versionDays);
      if (dated.length !== VERSIONS) throw new Error(`the portfolio has ${dated.length} versions, not ${VERSIONS}`);

      const path = `/portfolios/${portfolioId}/history/?from=${from}&to=${to}&frequency=D&model=true`;
      const get = async (accept: string) => {
        const started = performance.now();
        const res = await fetch(`${stack.managementUrl}${path}`, { headers: { authorization: `Bearer ${token}`, accept } });
        const body = new Uint8Array(await res.arrayBuffer());
        const elapsed = performance.now() - started;
        if (res.status !== 200) throw new Error(`GET history: ${res.status} ${Buffer.from(body).toString()}`);
        return { elapsed, body };
      };
      const timed = async (accept: string) => {
        for (let k = 0; k < options.warmup; k++) await get(accept);
        const times: number[] = [];
        let bytes = 0;
        for (let k = 0; k < options.reps; k++) {
          const { elapsed, body } = await get(accept);
          times.push(elapsed);
          bytes = body.length;
        }
        return { times, bytes };
      };
      const json = await timed('application/json');
      const arrow = await timed(ARROW);
      const answer = JSON.parse(Buffer.from((await get('application/json')).body).toString()) as {
        points: { date: string; value: number; twr: number; drawdown: number }[];
      };
      const moves = (await stack
        .db('entities')
        .select(stack.db.raw("doc ->> 'datetime' as datetime"), stack.db.raw("doc ->> 'quantity' as quantity"), stack.db.raw("doc ->> 'currency' as currency"))
        .where({ tenant_id: tenantId, parent_id: portfolioId, type: 'transactions' })) as { datetime: string; quantity: string; currency: string }[];
      const days = answer.points.map((p) => Math.floor(Date.parse(`${p.date}T00:00:00Z`) / DAY_MS));
      const columns = [...chosen.map((c) => c.isin), '$EUR', '$USD'];
      const baseline_case: NumpyCase = {
        days,
        closes: chosen.map((c) => days.map((day) => lastOnOrBefore(market.closes.get(c.isin)!, day))),
        currencies: chosen.map((c) => c.currency),
        // Rates are units per 1 EUR: one dollar is worth 1 / rate euros.
        fx: { USD: days.map((day) => 1 / lastOnOrBefore(market.usd, day)) },
        columns,
        versions: dated.map((v) => ({ day: v.day, units: columns.map((c) => Number(v.holdings[c] ?? 0)) })),
        flows: moves.map((m) => ({ day: Math.floor(Date.parse(m.datetime) / DAY_MS), amount: Number(m.quantity), currency: m.currency })),
      };
      // Sequential requests are logged in order: warm-ups and measured runs of JSON, then of Arrow.
      const served = readdirSync(stack.logDir)
        .filter((name) => name.startsWith('management'))
        .flatMap((name) => readFileSync(join(stack.logDir, name), 'utf8').split('\n'))
        .flatMap((line) => {
          try {
            const entry = JSON.parse(line) as { operation?: string; status?: number; duration_ms?: number };
            return entry.operation === 'getPortfolioHistory' && entry.status === 200 ? [entry.duration_ms!] : [];
          } catch {
            return [];
          }
        });
      const runs = options.warmup + options.reps;
      if (served.length < 2 * runs) throw new Error(`the access log has ${served.length} history requests, not ${2 * runs}`);
      return {
        json_server_ms: served.slice(options.warmup, runs),
        arrow_server_ms: served.slice(runs + options.warmup, 2 * runs),
        json_ms: json.times,
        arrow_ms: arrow.times,
        points: answer.points.length,
        versions: dated.length,
        cash_moves: CASH_MOVES,
        json_bytes: json.bytes,
        arrow_bytes: arrow.bytes,
        from,
        to,
        points_shown: answer.points,
        baseline_case,
      };
    } finally {
      await stack.stop();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
