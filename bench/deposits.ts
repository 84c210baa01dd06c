// Deposit benchmark: POST /events/deposit/ with a new Idempotency-Key per request (claim the key,
// CASH transaction, exact cash on the portfolio, outbox events, stored response: one transaction)
// and replays of used keys (the stored answer), at 32 concurrent clients through autocannon, next
// to the entity store's plain create POST /users/ measured the same way, alternating in one run;
// medians of the rounds. Afterwards the cash of every portfolio is checked against the deposits
// answered 201. `npm run bench:deposits` (BENCH_SECONDS, BENCH_ROUNDS and BENCH_CONNECTIONS change
// the defaults of 6, 3 and 32).
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { parseDecimal, sum, toText, type Money } from '@platform/shared';
import { median, record, round, roundTripsByOperation, startBenchPlatform, type Figures } from './lib/harness.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const AMOUNT = '10.00';

// Not counted against a rate limit, as in bench:entities (bench:rate-limits measures what counting costs).
const platform = await startBenchPlatform({ DATABASE_POOL_MAX: String(CONNECTIONS), LOG_LEVEL: 'info', RATE_LIMIT_ACCESS_KEY: '0' });
try {
  const headers = { authorization: `Bearer ${platform.token}`, 'content-type': 'application/json' };
  const url = platform.managementUrl;

  async function created(path: string, body: unknown): Promise<string> {
    const res = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  }

  const owner = await created('/users/', {});
  const newPortfolio = (name: string) =>
    created('/portfolios/', {
      name,
      owned_by_user_id: owner,
      base_currency: 'EUR',
      money_type: 'REAL_MONEY',
      config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
    });
  const spread: string[] = [];
  for (let i = 0; i < CONNECTIONS; i++) spread.push(await newPortfolio(`Deposits ${i}`));
  const hot = await newPortfolio('Hot row');

  // Every deposit sent, by key; the keys answered 201 are the deposits that count.
  const sent = new Map<string, { portfolio: string; body: string }>();
  const booked = new Set<string>();
  const firstAnswers = new Map<string, string>();
  const run = randomUUID().slice(0, 8);
  let sequence = 0;

  const figures = (result: autocannon.Result, wrong: number): Figures => ({
    rps: round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors + wrong,
  });

  async function users(): Promise<Figures> {
    const result = await autocannon({ url: `${url}/users/`, connections: CONNECTIONS, duration: SECONDS, headers, method: 'POST', body: '{}' });
    return figures(result, result.non2xx);
  }

  type InFlight = { key: string; portfolio: string; pooled: boolean };

  /**
   * Deposits with new keys. A request takes a free portfolio and gives it back with its answer, so
   * with as many portfolios as connections no two requests wait on the same row lock.
   */
  async function deposits(targets: string[]): Promise<Figures> {
    const free = [...targets];
    let wrong = 0;
    const result = await autocannon({
      url,
      connections: CONNECTIONS,
      duration: SECONDS,
      headers,
      requests: [
        {
          method: 'POST',
          setupRequest: (req, context) => {
            const key = `dep-${run}-${sequence++}`;
            const pooled = free.length > 0;
            const portfolio = free.pop() ?? targets[sequence % targets.length]!;
            const body = JSON.stringify({ data: { amount: AMOUNT, currency: 'EUR', portfolio, external_id: key } });
            sent.set(key, { portfolio, body });
            Object.assign(context, { key, portfolio, pooled } satisfies InFlight);
            return { ...req, path: '/events/deposit/', headers: { ...req.headers, 'idempotency-key': key }, body };
          },
          onResponse: (status, body, context) => {
            const { key, portfolio, pooled } = context as InFlight;
            if (pooled) free.push(portfolio);
            if (status !== 201) return void wrong++;
            booked.add(key);
            if (firstAnswers.size < 20) firstAnswers.set(key, body);
          },
        },
      ],
    });
    return figures(result, wrong);
  }

  const header = (all: Record<string, unknown>, name: string) => Object.entries(all).find(([k]) => k.toLowerCase() === name)?.[1];

  /** Re-sends (key, body) pairs answered 201 before; the answer must be the stored 201, marked replayed. */
  async function replays(): Promise<Figures> {
    const keys = [...booked];
    let i = 0;
    let wrong = 0;
    const result = await autocannon({
      url,
      connections: CONNECTIONS,
      duration: SECONDS,
      headers,
      requests: [
        {
          method: 'POST',
          setupRequest: (req) => {
            const key = keys[i++ % keys.length]!;
            return { ...req, path: '/events/deposit/', headers: { ...req.headers, 'idempotency-key': key }, body: sent.get(key)!.body };
          },
          onResponse: (status, _body, _context, answerHeaders) => {
            if (status !== 201 || header(answerHeaders ?? {}, 'idempotency-replayed') !== 'true') wrong++;
          },
        },
      ],
    });
    return figures(result, wrong);
  }

  /** The replay contract on a sample, checked one by one: 201, `Idempotency-Replayed: true`, the first answer's body. */
  async function checkReplaySample(): Promise<number> {
    for (const [key, first] of firstAnswers) {
      const res = await fetch(`${url}/events/deposit/`, { method: 'POST', headers: { ...headers, 'idempotency-key': key }, body: sent.get(key)!.body });
      const text = await res.text();
      if (res.status !== 201 || res.headers.get('idempotency-replayed') !== 'true' || text !== first) {
        throw new Error(
          `replay of ${key}: ${res.status}, Idempotency-Replayed ${res.headers.get('idempotency-replayed')}, body ${text === first ? 'as first sent' : 'differs'}`,
        );
      }
    }
    return firstAnswers.size;
  }

  const rows = {
    users: [] as Figures[],
    spread: [] as Figures[],
    hot: [] as Figures[],
    replay: [] as Figures[],
  };

  // Warm up both paths (these deposits count in the check like all others).
  await autocannon({ url: `${url}/users/`, connections: CONNECTIONS, duration: 2, headers, method: 'POST', body: '{}' });
  await deposits(spread);
  const sampled = await checkReplaySample();

  // Database round trips per request of each phase: the service's histogram before and after it.
  const trips = { users: { sum: 0, count: 0 }, spread: { sum: 0, count: 0 }, hot: { sum: 0, count: 0 }, replay: { sum: 0, count: 0 } };
  async function counted(phase: keyof typeof trips, operationId: string, run: () => Promise<Figures>): Promise<Figures> {
    const before = (await roundTripsByOperation(platform.metricsUrl)).get(operationId) ?? { sum: 0, count: 0 };
    const figures = await run();
    const after = (await roundTripsByOperation(platform.metricsUrl)).get(operationId) ?? { sum: 0, count: 0 };
    trips[phase].sum += after.sum - before.sum;
    trips[phase].count += after.count - before.count;
    return figures;
  }

  for (let round_ = 1; round_ <= ROUNDS; round_++) {
    console.log(`[bench] round ${round_} of ${ROUNDS}`);
    rows.users.push(await counted('users', 'createUser', users));
    rows.spread.push(await counted('spread', 'createDeposit', () => deposits(spread)));
    rows.hot.push(await counted('hot', 'createDeposit', () => deposits([hot])));
    rows.replay.push(await counted('replay', 'createDeposit', replays));
  }
  const tripsOf = (phase: keyof typeof trips) => (trips[phase].count > 0 ? round(trips[phase].sum / trips[phase].count, 1) : 0);

  // Requests cut off when a timed window closed may have committed unseen: settle each key that got
  // no 201 by re-sending it, as a client would. A stored 201 means it was booked during the run.
  await new Promise((r) => setTimeout(r, 1000));
  const settled = { booked_during_run: 0, booked_now: 0, failed: 0 };
  const unsettled = [...sent.keys()].filter((key) => !booked.has(key));
  for (const key of unsettled) {
    let res: Response | undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      res = await fetch(`${url}/events/deposit/`, { method: 'POST', headers: { ...headers, 'idempotency-key': key }, body: sent.get(key)!.body });
      await res.arrayBuffer();
      if (res.status !== 409) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    if (res!.status !== 201) settled.failed++;
    else {
      booked.add(key);
      if (res!.headers.get('idempotency-replayed') === 'true') settled.booked_during_run++;
      else settled.booked_now++;
    }
  }

  // The cash of each portfolio, read as the exact decimal text of the answer (never as a float).
  const expectedByPortfolio = new Map<string, number>();
  for (const key of booked) {
    const { portfolio } = sent.get(key)!;
    expectedByPortfolio.set(portfolio, (expectedByPortfolio.get(portfolio) ?? 0) + 1);
  }
  const amount = parseDecimal(AMOUNT);
  const cash: Money[] = [];
  let portfoliosMatching = 0;
  for (const id of [...spread, hot]) {
    const res = await fetch(`${url}/portfolios/${id}`, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /portfolios/${id}: ${res.status} ${text}`);
    const token = /"\$EUR"\s*:\s*([^,}\s]+)/.exec(text)?.[1];
    const value = token === undefined ? parseDecimal('0') : parseDecimal(token);
    cash.push(value);
    if (value.eq(amount.times(expectedByPortfolio.get(id) ?? 0))) portfoliosMatching++;
  }
  const total = sum(cash);
  const expected = amount.times(booked.size);
  const { count: cashTransactions } = (await platform
    .db('entities')
    .where({ type: 'transactions' })
    .whereRaw(`doc ->> 'type' = 'CASH'`)
    .count({ count: '*' })
    .first()) as { count: string };
  const correct = total.eq(expected) && portfoliosMatching === spread.length + 1 && Number(cashTransactions) === booked.size;
  const check = {
    deposits_sent: sent.size,
    deposits_201: booked.size,
    cut_off_settled: settled,
    cash_transactions_in_db: Number(cashTransactions),
    portfolios: spread.length + 1,
    portfolios_matching: portfoliosMatching,
    sum_eur: toText(total),
    expected_eur: toText(expected),
    correct,
  };
  console.log('[bench] check', check);

  const pick = (list: Figures[]): Figures => ({
    rps: median(list.map((f) => f.rps)),
    p50_ms: median(list.map((f) => f.p50_ms)),
    p99_ms: median(list.map((f) => f.p99_ms)),
    errors: list.reduce((a, f) => a + f.errors, 0),
  });
  const base = pick(rows.users);
  const summary = [
    { operation: 'POST /users/ (entity-store create, no key): baseline', rounds: rows.users, round_trips: tripsOf('users') },
    { operation: `POST /events/deposit/, new key, ${CONNECTIONS} portfolios (one per client)`, rounds: rows.spread, round_trips: tripsOf('spread') },
    { operation: `POST /events/deposit/, new key, 1 portfolio for all ${CONNECTIONS} clients (hot row)`, rounds: rows.hot, round_trips: tripsOf('hot') },
    { operation: 'POST /events/deposit/, replay of a used key and body', rounds: rows.replay, round_trips: tripsOf('replay') },
  ].map((r) => {
    const f = pick(r.rounds);
    return { operation: r.operation, ...f, round_trips: r.round_trips, ratio: round(f.rps / base.rps), rounds: r.rounds };
  });

  const markdown = [
    '### Deposits (`npm run bench:deposits`)',
    '',
    `${CONNECTIONS} concurrent clients (autocannon), ${ROUNDS} alternating rounds of ${SECONDS} s each, medians; measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine.`,
    `Deposit: \`POST /events/deposit/\` of ${AMOUNT} EUR with a new \`Idempotency-Key\` and external_id, tenant broker integration CLIENT (201, settled): key claimed, CASH transaction, portfolio cash and version row, outbox events and the stored response in one transaction with row-level security.`,
    'Replay: the same key and body sent again; the answer is the stored 201 with `Idempotency-Replayed: true` (any other answer counts as an error).',
    "Baseline: `POST /users/` with `{}` and no key, the entity store's plain create, measured the same way in the same run. Requests are not counted against a rate limit (bench:rate-limits measures that).",
    'Round trips: database round trips per request (the service’s `http_request_database_round_trips`; a batch of statements sent together is one).',
    '',
    '| operation | req/s | p50 ms | p99 ms | round trips | errors or wrong answers | req/s / POST /users/ (target ≥ 0.5× for a new key) |',
    '|---|---|---|---|---|---|---|',
    ...summary.map((r) => `| ${r.operation} | ${r.rps} | ${r.p50_ms} | ${r.p99_ms} | ${r.round_trips} | ${r.errors} | ${r.ratio}× |`),
    '',
    `Replay contract checked one by one on ${sampled} keys before the rounds (201, \`Idempotency-Replayed: true\`, body byte-equal to the first answer).`,
    `Correctness after the run: ${check.deposits_201} deposits answered 201 (${settled.booked_during_run + settled.booked_now + settled.failed} cut off when a timed window closed, settled by re-sending their key: ${settled.booked_during_run} already booked, ${settled.booked_now} booked then, ${settled.failed} failed); ${check.cash_transactions_in_db} CASH transactions in the database; ` +
      `sum of \`$EUR\` over the ${check.portfolios} portfolios (\`GET /portfolios/{id}\`, read as decimal text) ${check.sum_eur} against ${AMOUNT} × ${check.deposits_201} = ${check.expected_eur}, ${check.portfolios_matching} of ${check.portfolios} portfolios exact: ${correct ? 'nothing double-booked or lost' : '**MISMATCH**'}.`,
  ].join('\n');

  record('deposits', { connections: CONNECTIONS, seconds: SECONDS, rounds: ROUNDS, results: summary, check }, markdown);
  console.log(markdown);
  if (!correct) process.exitCode = 1;
} finally {
  await platform.stop();
}
