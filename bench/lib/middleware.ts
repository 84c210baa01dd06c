// A bank's Client Middleware as load: one machine client of a tenant (one access key, one token
// renewed before it expires, one API key for the data service) serving many end customers, each a
// virtual client with a user and two real-money user-managed portfolios. Every operation is one
// weighted pick of the mix below. Its calls go through the client package (@platform/client), as an
// integrator's would: its token session, Idempotency-Keys and retries (docs/adr/0034-client-package.md).
// Writes are retried until acknowledged: a deposit with the same Idempotency-Key and body, a PATCH
// with the same value; reads are sent once (or, with `retryReads`, retried by the client package's
// policy as GETs are safe to repeat). What was acknowledged is kept in a ledger for the checks
// afterwards, and how each operation ended in `results`.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { TokenSession, backoffDelay, createDataClient, createManagementClient } from '@platform/client';
import type { Knex } from 'knex';
import { createAccessKey, createApiKey, createTenant, setTenantRateLimits } from '@platform/management-service/admin/provisioning';
import type { Attempt, Recorder } from './open-loop.ts';
import { seededRandom } from '@platform/test-support/random';

/** The operations, their share of the mix (in %) and what each sends. */
export const OPERATIONS = {
  get_portfolio: { weight: 30, label: 'GET /portfolios/{id}' },
  query_by_owner: { weight: 15, label: "GET /portfolios/?query=owned_by_user_id eq '…' (2 results)" },
  patch_name: { weight: 10, label: 'PATCH /portfolios/{id} {name} (retried until 200)' },
  deposit: { weight: 10, label: 'POST /events/deposit/ with a new Idempotency-Key (retried with the same key until 201)' },
  poll_events: { weight: 15, label: "GET /events/?after=<the client's cursor>&limit=100" },
  reference_query: { weight: 15, label: 'POST /data/reference/query/, 10–100 ISINs, 4 fields (data service)' },
  simulation: { weight: 5, label: 'POST /performance/future/, 500 scenarios × 5 years monthly × 2 classes (data service)' },
} as const;
export type Operation = keyof typeof OPERATIONS;

const REQUEST_TIMEOUT_MS = 10_000;
const LOGIN_FOR_MS = 120_000;
const FIELDS = ['NAME', 'ASSET_CLASS', 'CURRENCY', 'PRICE'];

type VirtualClient = { userId: string; portfolios: [string, string]; cursor?: string; patching: boolean; patches: number };

export type Ledger = {
  /** Every deposit sent, by its key (also its external_id); `acked` once a 201 came back. */
  deposits: Map<string, { portfolio: string; amount: string; acked: boolean }>;
  /** Per portfolio, the names whose PATCH was answered 200, in order; `pending` while one is unanswered. */
  patches: Map<string, { acked: string[]; pending?: string }>;
  /** Answers that no retry can fix and that should not happen (with the request that got them). */
  anomalies: string[];
};

/** How one operation of the mix ended, after every retry: what its caller saw. */
export type OperationResult = { op: string; dueAt: number; endedAt: number; ok: boolean; outcome: string };

export type Middleware = {
  tenantId: string;
  /** Every operation of the mix that ended, in the order they ended. */
  results: OperationResult[];
  /** The machine client's current access token (for reading the feed afterwards). */
  accessToken: () => Promise<string>;
  clients: VirtualClient[];
  ledger: Ledger;
  /** One operation of the mix, due at `dueAt` (recorder time). */
  operate: (i: number, dueAt: number) => Promise<void>;
  /** Sends every write not yet acknowledged again (same key, same value) until answered, for at most `ms`. */
  settle: (ms: number) => Promise<{ deposits: number; patches: number; unsettled: number }>;
  stop: () => void;
};

/** What went wrong with a request, short: `503 unavailable`, `timeout`, `ECONNREFUSED`. */
function failureOf(error: unknown): string {
  const e = error as { name?: string; cause?: { code?: string; name?: string }; message?: string };
  if (e.name === 'TimeoutError') return 'timeout';
  return e.cause?.code ?? e.cause?.name ?? e.name ?? 'error';
}
const problemCode = (text: string) => /"code"\s*:\s*"([a-z_]+)"/.exec(text)?.[1];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The operation a request belongs to, for the recording `fetch` below; its attempts and the last one recorded. */
type InFlight = { op: string; dueAt: number; attempts: number; last?: Attempt };

/** What an unanswered write got: acknowledged, refused for good (an anomaly), or still open when its time was up. */
type WriteEnd = 'acked' | 'refused' | 'open';

export async function startMiddleware(options: {
  db: Knex;
  managementUrl: string;
  dataUrl: string;
  recorder: Recorder;
  clients: number;
  /** How long a write is retried before the operation gives up (settle() tries again later). */
  retryForMs: number;
  /** Reads retried by the client package's policy for as long as writes (503, 429, no answer); off: sent once. */
  retryReads?: boolean;
  seed?: number;
  /** The operations of the mix to send, at their weights (default: all of them). */
  operations?: Operation[];
  log: (line: string) => void;
}): Promise<Middleware> {
  const { db, managementUrl: M, dataUrl: D, recorder, log } = options;
  const random = seededRandom(options.seed ?? 20260601);
  const tenantId = 'middleware';
  await createTenant(db, { id: tenantId });
  // A bank's contract limit, counted in Postgres like any tenant's (docs/adr/0023-rate-limits.md).
  await setTenantRateLimits(db, tenantId, { requests_per_minute: 10_000_000 });
  const accessKey = await createAccessKey(db, tenantId, 'load');
  const apiKey = (await createApiKey(db, tenantId, 'load')).api_key;
  const ledger: Ledger = { deposits: new Map(), patches: new Map(), anomalies: [] };
  const run = randomUUID().slice(0, 8);
  let deposits = 0;

  // Every HTTP attempt the client package sends (its retries, logins and renewals included) passes
  // here: timed out after REQUEST_TIMEOUT_MS and recorded, the first attempt of an operation from
  // when it was due, a later one from when it started. The seeding before the run is not recorded.
  const inFlight = new AsyncLocalStorage<InFlight>();
  const recording = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    const call = inFlight.getStore();
    const token = path === '/auth/login/' ? 'login' : path === '/auth/refresh-token/' ? 'refresh' : undefined;
    const timeout = AbortSignal.any([request.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]);
    if (!call && !token) return fetch(request, { signal: timeout });
    const retry = token !== undefined || !call || call.attempts++ > 0;
    const at = retry ? recorder.now() : call.dueAt;
    const attempt: Attempt = { op: token ?? call!.op, at, ms: 0, outcome: 'ok', retry };
    try {
      const res = await fetch(request, { signal: timeout });
      const text = await res.text();
      attempt.ms = recorder.now() - at;
      if (!res.ok) attempt.outcome = `${res.status} ${problemCode(text) ?? ''}`.trim();
      recorder.add(attempt);
      if (call && !token) call.last = attempt;
      return new Response(text === '' ? null : text, { status: res.status, statusText: res.statusText, headers: res.headers });
    } catch (error) {
      attempt.ms = recorder.now() - at;
      attempt.outcome = failureOf(error);
      recorder.add(attempt);
      throw error;
    }
  };

  // One token for every call: logged in once (a login is tried until the service answers,
  // LOGIN_FOR_MS at most), renewed by the client package before it expires and on a 401.
  const tokens = createManagementClient({
    baseUrl: M,
    fetch: recording,
    retry: { maxAttempts: Number.MAX_SAFE_INTEGER, baseDelayMs: 100, maxDelayMs: 2000, maxElapsedMs: LOGIN_FOR_MS },
  });
  const session = new TokenSession({
    login: async () => (await tokens.POST('/auth/login/', { body: accessKey })).data!,
    refresh: async (refreshToken) => (await tokens.POST('/auth/refresh-token/', { body: { refresh_token: refreshToken } })).data!,
    now: Date.now,
  });
  await session.accessToken().catch((error: unknown) => {
    throw new Error(`no login for ${LOGIN_FOR_MS / 1000} s: the management service does not come back`, { cause: error });
  });
  // Writes are retried by the client package's policy (429, 503, a keyed POST's lost answer, with
  // Retry-After or back-off) for `retryForMs`; reads too with `retryReads`, else sent once.
  const writePolicy = { maxAttempts: Number.MAX_SAFE_INTEGER, baseDelayMs: 100, maxDelayMs: 2000, maxElapsedMs: options.retryForMs };
  const writes = createManagementClient({ baseUrl: M, session, fetch: recording, retry: writePolicy, problems: 'return' });
  const readPolicy = options.retryReads ? writePolicy : false;
  const reads = createManagementClient({ baseUrl: M, session, fetch: recording, retry: readPolicy, problems: 'return' });
  const data = createDataClient({ baseUrl: D, tenantId, apiKey, fetch: recording, retry: readPolicy, problems: 'return' });
  const results: OperationResult[] = [];
  const ended = (op: Operation, dueAt: number, ok: boolean, outcome: string) => results.push({ op, dueAt, endedAt: recorder.now(), ok, outcome });

  // Seeding: users and their portfolios through the interface, a few at a time.
  async function created(answer: Promise<{ data?: { id: string }; error?: unknown; response: Response }>, what: string): Promise<string> {
    const { data: made, error, response } = await answer;
    if (response.status !== 201) throw new Error(`POST ${what}: ${response.status} ${JSON.stringify(error)}`);
    return made!.id;
  }
  const portfolio = (owner: string, name: string) =>
    created(
      writes.POST('/portfolios/', {
        body: {
          name,
          owned_by_user_id: owner,
          base_currency: 'EUR',
          money_type: 'REAL_MONEY',
          config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
        },
      }),
      '/portfolios/',
    );
  const clients: VirtualClient[] = new Array(options.clients);
  for (let from = 0; from < options.clients; from += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, options.clients - from) }, async (_, k) => {
        const i = from + k;
        const userId = await created(writes.POST('/users/', { body: { first_name: 'Load', last_name: `Client ${i}` } }), '/users/');
        clients[i] = { userId, portfolios: [await portfolio(userId, `c${i}-0`), await portfolio(userId, `c${i}-a`)], patching: false, patches: 0 };
      }),
    );
  }
  for (const c of clients) ledger.patches.set(c.portfolios[0], { acked: [] });
  const universe = await data.GET('/data/reference/universe/', { params: { query: { universe_name: 'GLOBAL', fields: ['NAME'] } } });
  if (universe.response.status !== 200) throw new Error(`universe: ${universe.response.status} ${JSON.stringify(universe.error)}`);
  const isins = Object.keys(universe.data!.data);
  log(`seeded tenant ${tenantId}: ${clients.length} users, ${2 * clients.length} portfolios; ${isins.length} ISINs in GLOBAL`);

  /**
   * Sends a write until it is acknowledged, refused for good, or `deadlineMs` passed since it was
   * due. The client package retries what is safe for any caller; a middleware also sends again what
   * its own writes make safe: a PATCH of the same value whose answer was lost (the client never
   * repeats a PATCH), and any 5xx (a write is performed once or not at all), with the package's back-off.
   */
  async function untilAnswered(
    op: Operation,
    dueAt: number,
    deadlineMs: number,
    send: () => Promise<{ error?: unknown; response: Response }>,
  ): Promise<{ end: WriteEnd; detail?: string }> {
    const call: InFlight = { op, dueAt, attempts: 0 };
    const result = await inFlight.run(call, async (): Promise<{ end: WriteEnd; detail?: string }> => {
      for (let n = 1; ; n++) {
        const answer = await send().catch(() => undefined);
        const status = answer?.response.status;
        if (answer?.response.ok) return { end: 'acked' };
        const again =
          status === undefined ||
          status >= 500 ||
          status === 429 ||
          status === 408 ||
          (status === 409 && problemCode(JSON.stringify(answer?.error)) === 'idempotency_in_flight');
        if (!again) return { end: 'refused', detail: `${status} ${JSON.stringify(answer?.error).slice(0, 300)}` };
        if (recorder.now() - dueAt > deadlineMs) return { end: 'open' };
        await sleep(backoffDelay(n, writePolicy, random));
      }
    });
    ended(op, dueAt, result.end === 'acked', result.end === 'acked' ? 'ok' : result.end === 'refused' ? 'refused' : (call.last?.outcome ?? 'unanswered'));
    return result;
  }

  async function deposit(key: string, dueAt: number, deadlineMs: number) {
    const entry = ledger.deposits.get(key)!;
    const body = { data: { amount: entry.amount, currency: 'EUR', portfolio: entry.portfolio, external_id: key } };
    // The middleware's own key (also the deposit's external_id), the same on every attempt and in settle().
    const { end, detail } = await untilAnswered('deposit', dueAt, deadlineMs, () =>
      writes.POST('/events/deposit/', { headers: { 'idempotency-key': key }, body }),
    );
    if (end === 'acked') entry.acked = true;
    if (end === 'refused') ledger.anomalies.push(`deposit ${key}: ${detail}`);
    return end !== 'open';
  }

  async function patch(client: VirtualClient, name: string, dueAt: number, deadlineMs: number) {
    const id = client.portfolios[0];
    const entry = ledger.patches.get(id)!;
    entry.pending = name;
    const { end, detail } = await untilAnswered('patch_name', dueAt, deadlineMs, () =>
      writes.PATCH('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: id } }, body: { name } }),
    );
    if (end === 'acked') entry.acked.push(name);
    if (end === 'refused') ledger.anomalies.push(`PATCH ${id} name ${name}: ${detail}`);
    if (end !== 'open') entry.pending = undefined;
    return end !== 'open';
  }

  /** A read, sent once: 200 expected, `check` may call the answer wrong. */
  async function read<T>(
    op: Operation,
    dueAt: number,
    send: () => Promise<{ data?: T; response: Response }>,
    check?: (answer: T) => boolean,
  ): Promise<T | undefined> {
    const call: InFlight = { op, dueAt, attempts: 0 };
    const answer = await inFlight.run(call, send).catch(() => undefined);
    if (answer?.response.status !== 200) {
      ended(op, dueAt, false, call.last?.outcome ?? 'error');
      return undefined;
    }
    if (check && !check(answer.data!)) {
      call.last!.outcome = 'wrong answer';
      ended(op, dueAt, false, 'wrong answer');
      return undefined;
    }
    ended(op, dueAt, true, 'ok');
    return answer.data;
  }

  const picks: Operation[] = [];
  for (const [op, { weight }] of Object.entries(OPERATIONS))
    if (!options.operations || options.operations.includes(op as Operation)) for (let w = 0; w < weight; w++) picks.push(op as Operation);
  const simulationBody = (seed: number) => ({
    asset_classes: { EQUITY: [0.5, 0.7], FIXED_INCOME: [0.3, 0.5] },
    start_date: '2026-01-31',
    end_date: '2031-01-31',
    start_amount: 10_000,
    recurring_deposit_amount: 200,
    recurring_deposit_frequency: 'M' as const,
    sample_frequency: 'M' as const,
    quantiles: [0.05, 0.5, 0.95],
    scenarios: 500,
    seed,
    // The contract's defaults, written out because the generated type of the body requires them.
    use_expected_returns: true,
    short_to_long_term_transition_cut_off: 10,
    asset_class_st_mean_and_stdev: { EQUITY: { mean: 0.07, stdev: 0.16 }, FIXED_INCOME: { mean: 0.03, stdev: 0.05 } },
  });

  const operate = async (i: number, dueAt: number) => {
    const op = picks[Math.floor(random() * picks.length)]!;
    const client = clients[Math.floor(random() * clients.length)]!;
    switch (op) {
      case 'get_portfolio':
        return void (await read(op, dueAt, () => reads.GET('/portfolios/{portfolio_id}', { params: { path: { portfolio_id: client.portfolios[i % 2]! } } })));
      case 'query_by_owner': {
        const query = `owned_by_user_id eq '${client.userId}'`;
        return void (await read(
          op,
          dueAt,
          () => reads.GET('/portfolios/', { params: { query: { query } } }),
          (page) => page.count === 2,
        ));
      }
      case 'poll_events': {
        const page = await read(op, dueAt, () => reads.GET('/events/', { params: { query: { limit: 100, after: client.cursor } } }));
        if (page) client.cursor = page.next_cursor;
        return;
      }
      case 'reference_query': {
        const n = 10 + Math.floor(random() * 91);
        const ids = new Set<string>();
        while (ids.size < n) ids.add(isins[Math.floor(random() * isins.length)]!);
        const body = { instrument_ids: [...ids], fields: FIELDS, fields_extra: [] };
        return void (await read(
          op,
          dueAt,
          () => data.POST('/data/reference/query/', { body }),
          (answer) => Object.keys(answer.data).length === n,
        ));
      }
      case 'simulation':
        return void (await read(op, dueAt, () => data.POST('/performance/future/', { body: simulationBody(i) })));
      case 'deposit': {
        const key = `dep-${run}-${++deposits}`;
        const cents = 100 + Math.floor(random() * 99_900);
        ledger.deposits.set(key, {
          portfolio: client.portfolios[0],
          amount: `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`,
          acked: false,
        });
        return void (await deposit(key, dueAt, options.retryForMs));
      }
      case 'patch_name': {
        // One PATCH at a time per portfolio, so that the last one answered is the name it must have.
        const start = Math.floor(random() * clients.length);
        let free: VirtualClient | undefined;
        for (let k = 0; k < clients.length && !free; k++) if (!clients[(start + k) % clients.length]!.patching) free = clients[(start + k) % clients.length];
        if (!free) return void recorder.add({ op, at: dueAt, ms: 0, outcome: 'skipped: every portfolio has a PATCH in flight', retry: false });
        free.patching = true;
        try {
          await patch(free, `c${clients.indexOf(free)}-${++free.patches}`, dueAt, options.retryForMs);
        } finally {
          free.patching = false;
        }
        return;
      }
    }
  };

  const settle = async (ms: number) => {
    const started = recorder.now();
    const deposits = [...ledger.deposits].filter(([, d]) => !d.acked).map(([key]) => key);
    const patches = clients.filter((c) => ledger.patches.get(c.portfolios[0])!.pending !== undefined);
    let unsettled = 0;
    await Promise.all([
      ...deposits.map(async (key) => {
        if (!(await deposit(key, started, ms))) unsettled++;
      }),
      ...patches.map(async (c) => {
        if (!(await patch(c, ledger.patches.get(c.portfolios[0])!.pending!, started, ms))) unsettled++;
      }),
    ]);
    return { deposits: deposits.length, patches: patches.length, unsettled };
  };

  return {
    tenantId,
    results,
    accessToken: () => session.accessToken(),
    clients,
    ledger,
    operate,
    settle,
    // Nothing runs between calls: the token is renewed by the call that finds it due.
    stop: () => undefined,
  };
}
