// A bank's Client Middleware as load: one machine client of a tenant (one access key, one token
// renewed before it expires, one API key for the data service) serving many end customers, each a
// virtual client with a user and two real-money user-managed portfolios. Every operation is one
// weighted pick of the mix below. Writes are retried as a middleware retries them: a deposit with
// the same Idempotency-Key and body, a PATCH with the same value, until acknowledged; reads are not
// retried. What was acknowledged is kept in a ledger for the checks afterwards.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createAccessKey, createApiKey, createTenant, setTenantRateLimits } from '../../management-service/src/admin/provisioning.ts';
import type { Recorder } from './open-loop.ts';

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

export type Middleware = {
  tenantId: string;
  clients: VirtualClient[];
  ledger: Ledger;
  /** One operation of the mix, due at `dueAt` (recorder time). */
  operate: (i: number, dueAt: number) => Promise<void>;
  /** Sends every write not yet acknowledged again (same key, same value) until answered, for at most `ms`. */
  settle: (ms: number) => Promise<{ deposits: number; patches: number; unsettled: number }>;
  stop: () => void;
};

/** A small seeded generator (mulberry32), so that every run sends the same mix. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What went wrong with a request, short: `503 unavailable`, `timeout`, `ECONNREFUSED`. */
function failureOf(error: unknown): string {
  const e = error as { name?: string; cause?: { code?: string; name?: string }; message?: string };
  if (e.name === 'TimeoutError') return 'timeout';
  return e.cause?.code ?? e.cause?.name ?? e.name ?? 'error';
}
const problemCode = (text: string) => /"code"\s*:\s*"([a-z_]+)"/.exec(text)?.[1];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Answer = { status: number; text: string; headers: Headers };

export async function startMiddleware(options: {
  db: Knex;
  managementUrl: string;
  dataUrl: string;
  recorder: Recorder;
  clients: number;
  /** How long a write is retried before the operation gives up (settle() tries again later). */
  retryForMs: number;
  seed?: number;
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

  /** One HTTP request, recorded; undefined when no answer came (refused, reset, timed out). */
  async function call(op: string, method: string, url: string, init: { headers: Record<string, string>; body?: string }, dueAt: number, retry: boolean) {
    const from = retry ? recorder.now() : dueAt;
    try {
      const res = await fetch(url, { method, headers: init.headers, body: init.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      const text = await res.text();
      return {
        answer: { status: res.status, text, headers: res.headers } as Answer,
        record: (ok: boolean, wrong?: string) => {
          recorder.add({ op, at: from, ms: recorder.now() - from, outcome: ok ? 'ok' : (wrong ?? `${res.status} ${problemCode(text) ?? ''}`.trim()), retry });
        },
      };
    } catch (error) {
      recorder.add({ op, at: from, ms: recorder.now() - from, outcome: failureOf(error), retry });
      return undefined;
    }
  }

  // The machine client's token: renewed by logging in again 60 s before it expires, and at once
  // when an answer is 401; one login at a time, retried until the service answers (LOGIN_FOR_MS at most).
  let token = '';
  let renewing: Promise<void> | undefined;
  const login = async () => {
    const started = recorder.now();
    for (let attempt = 0; ; attempt++) {
      const done = await call(
        'login',
        'POST',
        `${M}/auth/login/`,
        { headers: { 'content-type': 'application/json' }, body: JSON.stringify(accessKey) },
        recorder.now(),
        true,
      );
      if (done?.answer.status === 200) {
        done.record(true);
        token = (JSON.parse(done.answer.text) as { access_token: string }).access_token;
        return;
      }
      done?.record(false);
      if (recorder.now() - started > LOGIN_FOR_MS) throw new Error(`no login for ${LOGIN_FOR_MS / 1000} s: the management service does not come back`);
      await sleep(Math.min(2000, 100 * 2 ** attempt));
    }
  };
  const renew = (used: string) => {
    if (token !== used) return Promise.resolve();
    renewing ??= login().finally(() => (renewing = undefined));
    return renewing;
  };
  await login();
  // A failed renewal here shows in the next request's 401, whose renewal fails the run.
  const renewal = setInterval(() => void renew(token).catch(() => undefined), 240_000);
  const auth = () => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
  const keyHeaders = { 'x-tenant-id': tenantId, 'x-api-key': apiKey, 'content-type': 'application/json' };

  // Seeding: users and their portfolios through the interface, a few at a time.
  async function create(path: string, body: unknown): Promise<string> {
    const res = await fetch(`${M}${path}`, { method: 'POST', headers: auth(), body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${text}`);
    return (JSON.parse(text) as { id: string }).id;
  }
  const portfolio = (owner: string, name: string) =>
    create('/portfolios/', {
      name,
      owned_by_user_id: owner,
      base_currency: 'EUR',
      money_type: 'REAL_MONEY',
      config: { manager: 'USER_MANAGED', manager_version: 1, manager_settings: {} },
    });
  const clients: VirtualClient[] = new Array(options.clients);
  for (let from = 0; from < options.clients; from += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, options.clients - from) }, async (_, k) => {
        const i = from + k;
        const userId = await create('/users/', { first_name: 'Load', last_name: `Client ${i}` });
        clients[i] = { userId, portfolios: [await portfolio(userId, `c${i}-0`), await portfolio(userId, `c${i}-a`)], patching: false, patches: 0 };
      }),
    );
  }
  for (const c of clients) ledger.patches.set(c.portfolios[0], { acked: [] });
  const universe = await fetch(`${D}/data/reference/universe/?universe_name=GLOBAL&fields=NAME`, { headers: keyHeaders });
  if (universe.status !== 200) throw new Error(`universe: ${universe.status} ${await universe.text()}`);
  const isins = Object.keys(((await universe.json()) as { data: Record<string, unknown> }).data);
  log(`seeded tenant ${tenantId}: ${clients.length} users, ${2 * clients.length} portfolios; ${isins.length} ISINs in GLOBAL`);

  /**
   * Sends a write until `attempt` says it is done: answered, refused for good, or `retryForMs`
   * passed since it was due. Backs off 100 ms doubling to 2 s, or as long as Retry-After says (at most 5 s).
   */
  async function retried(dueAt: number, deadlineMs: number, attempt: (retry: boolean) => Promise<'done' | 'retry' | number>): Promise<boolean> {
    for (let n = 0; ; n++) {
      const next = await attempt(n > 0);
      if (next === 'done') return true;
      if (recorder.now() - dueAt > deadlineMs) return false;
      await sleep(typeof next === 'number' ? next : Math.min(2000, 100 * 2 ** n) * (0.5 + random()));
    }
  }
  const retryable = (a: Answer) =>
    a.status >= 500 || a.status === 429 || a.status === 408 || (a.status === 409 && problemCode(a.text) === 'idempotency_in_flight');
  const retryAfter = (a: Answer) => {
    const seconds = Number(a.headers.get('retry-after'));
    return Number.isFinite(seconds) && seconds > 0 ? Math.min(5, seconds) * 1000 : 'retry';
  };

  async function deposit(key: string, dueAt: number, deadlineMs: number) {
    const entry = ledger.deposits.get(key)!;
    const body = JSON.stringify({ data: { amount: entry.amount, currency: 'EUR', portfolio: entry.portfolio, external_id: key } });
    return retried(dueAt, deadlineMs, async (retry) => {
      const used = token;
      const done = await call('deposit', 'POST', `${M}/events/deposit/`, { headers: { ...auth(), 'idempotency-key': key }, body }, dueAt, retry);
      if (!done) return 'retry';
      const a = done.answer;
      done.record(a.status === 201);
      if (a.status === 201) {
        entry.acked = true;
        return 'done';
      }
      if (a.status === 401) {
        await renew(used);
        return 'retry';
      }
      if (retryable(a)) return retryAfter(a);
      ledger.anomalies.push(`deposit ${key}: ${a.status} ${a.text.slice(0, 300)}`);
      return 'done';
    });
  }

  async function patch(client: VirtualClient, name: string, dueAt: number, deadlineMs: number) {
    const id = client.portfolios[0];
    const entry = ledger.patches.get(id)!;
    entry.pending = name;
    const answered = await retried(dueAt, deadlineMs, async (retry) => {
      const used = token;
      const done = await call(
        'patch_name',
        'PATCH',
        `${M}/portfolios/${id}`,
        { headers: { ...auth(), 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ name }) },
        dueAt,
        retry,
      );
      if (!done) return 'retry';
      const a = done.answer;
      done.record(a.status === 200);
      if (a.status === 200) {
        entry.acked.push(name);
        entry.pending = undefined;
        return 'done';
      }
      if (a.status === 401) {
        await renew(used);
        return 'retry';
      }
      if (retryable(a)) return retryAfter(a);
      ledger.anomalies.push(`PATCH ${id} name ${name}: ${a.status} ${a.text.slice(0, 300)}`);
      entry.pending = undefined;
      return 'done';
    });
    return answered;
  }

  /** A read: 200 expected, `check` may call the answer wrong; a 401 renews the token (the read is not repeated). */
  async function read(
    op: Operation,
    method: string,
    url: string,
    headers: Record<string, string>,
    dueAt: number,
    body?: string,
    check?: (a: Answer) => string | undefined,
  ) {
    const used = token;
    const done = await call(op, method, url, { headers, body }, dueAt, false);
    if (!done) return;
    const a = done.answer;
    const wrong = a.status === 200 && check ? check(a) : undefined;
    done.record(a.status === 200 && !wrong, wrong);
    if (a.status === 401 && headers.authorization) await renew(used);
    if (a.status === 200 && op === 'poll_events') return JSON.parse(a.text) as { next_cursor: string };
    return undefined;
  }

  const picks: Operation[] = [];
  for (const [op, { weight }] of Object.entries(OPERATIONS)) for (let w = 0; w < weight; w++) picks.push(op as Operation);
  const simulationBody = (seed: number) =>
    JSON.stringify({
      asset_classes: { EQUITY: [0.5, 0.7], FIXED_INCOME: [0.3, 0.5] },
      start_date: '2026-01-31',
      end_date: '2031-01-31',
      start_amount: 10_000,
      recurring_deposit_amount: 200,
      recurring_deposit_frequency: 'M',
      sample_frequency: 'M',
      quantiles: [0.05, 0.5, 0.95],
      scenarios: 500,
      seed,
      asset_class_st_mean_and_stdev: { EQUITY: { mean: 0.07, stdev: 0.16 }, FIXED_INCOME: { mean: 0.03, stdev: 0.05 } },
    });

  const operate = async (i: number, dueAt: number) => {
    const op = picks[Math.floor(random() * picks.length)]!;
    const client = clients[Math.floor(random() * clients.length)]!;
    switch (op) {
      case 'get_portfolio':
        return void (await read(op, 'GET', `${M}/portfolios/${client.portfolios[i % 2]}`, auth(), dueAt));
      case 'query_by_owner': {
        const query = encodeURIComponent(`owned_by_user_id eq '${client.userId}'`);
        return void (await read(op, 'GET', `${M}/portfolios/?query=${query}`, auth(), dueAt, undefined, (a) =>
          (JSON.parse(a.text) as { count: number }).count === 2 ? undefined : 'wrong answer',
        ));
      }
      case 'poll_events': {
        const after = client.cursor ? `&after=${encodeURIComponent(client.cursor)}` : '';
        const page = await read(op, 'GET', `${M}/events/?limit=100${after}`, auth(), dueAt);
        if (page) client.cursor = page.next_cursor;
        return;
      }
      case 'reference_query': {
        const n = 10 + Math.floor(random() * 91);
        const ids = new Set<string>();
        while (ids.size < n) ids.add(isins[Math.floor(random() * isins.length)]!);
        const body = JSON.stringify({ instrument_ids: [...ids], fields: FIELDS, fields_extra: [] });
        return void (await read(op, 'POST', `${D}/data/reference/query/`, keyHeaders, dueAt, body, (a) =>
          Object.keys((JSON.parse(a.text) as { data: object }).data).length === n ? undefined : 'wrong answer',
        ));
      }
      case 'simulation':
        return void (await read(op, 'POST', `${D}/performance/future/`, keyHeaders, dueAt, simulationBody(i)));
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
    clients,
    ledger,
    operate,
    settle,
    stop: () => clearInterval(renewal),
  };
}
