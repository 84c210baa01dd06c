import assert from 'node:assert/strict';
import fc, { type AsyncCommand } from 'fast-check';
import type { Knex } from 'knex';
import { fromNumber, parseDecimal, sum, toText, type Money } from '@platform/shared';
import { build, machineApi, type Api } from '@platform/test-support/fixtures';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { ISIN_A, ISIN_B, ISIN_C, account, executeOptimization, insertOptimization, order, settleOnce, steeredBroker, type BrokerMode } from './fixtures.ts';

/**
 * A model-based test of the cash (docs/adr/0022-execution-and-withdrawals.md, docs/adr/0009-funding-modes.md): random
 * sequences of deposits, payouts asked for and reported, divest_amount changes, holdings PATCHes, executions and broker
 * passes that settle, refuse, lose the answer or find the broker away, some requests repeated with their
 * Idempotency-Key, over portfolios of a SERVICE and a CLIENT tenant, against the real service and Postgres. The broker
 * is stepped by hand (a broker command is one settlement pass), so instructions wait as long as the sequence says.
 *
 * After every step: the cash is never below 0; the cash is what the bookings say (the portfolio's start, the client's
 * accepted PATCHes, SETTLED CASH transactions, ORDER transactions and their costs); every answered Idempotency-Key had
 * exactly one effect. After every broker pass: no payout went out larger than the divest_amount in force when it was
 * sent, and no instruction id was sent with two amounts. CASH_MODEL_RUNS raises the number of sequences,
 * CASH_MODEL_SEED changes them.
 */

type Kind = 'SERVICE_USER' | 'SERVICE_ROBO' | 'CLIENT_USER' | 'CLIENT_PAPER';
type Tenant = { api: Api; tenantId: string; integration: 'CLIENT' | 'SERVICE'; owner: string };
type Portfolio = { kind: Kind; id: string; tenant: Tenant };
/** A request sent with an Idempotency-Key and what it answered first; `effect` is what it must have caused once. */
type Keyed = {
  key: string;
  path: string;
  body: unknown;
  status: number;
  text: string;
  portfolio: Portfolio;
  effect: 'deposit' | 'request' | 'report';
};
/** `baseline`: each portfolio's cash before any booking: its start plus the client's accepted PATCHes of the cash. */
type Model = { baseline: Map<string, Money>; keyed: Keyed[] };
type Real = { db: Knex; portfolios: Map<Kind, Portfolio>; broker: ReturnType<typeof steeredBroker> };

const ZERO = parseDecimal('0');
const EVERYTHING = 1e100;

describe('cash under random sequences (docs/adr/0022-execution-and-withdrawals.md)', function () {
  this.timeout(300_000);
  let platform: TestPlatform;
  let service: Tenant;
  let client: Tenant;
  let keys = 0;
  /** The sequence last started: what it left open is settled before the next starts, and its books checked then. */
  let previous: { model: Model; real: Real } | undefined;

  const tenant = async (integration: 'CLIENT' | 'SERVICE'): Promise<Tenant> => {
    const t = await platform.tenant(undefined, { brokerIntegration: integration });
    const api = await machineApi(platform, t);
    return { api, tenantId: t.tenantId, integration, owner: (await api('POST', '/users/', build.user())).body.id };
  };

  before(async () => {
    platform = await startTestPlatform({ BROKER_SETTLEMENT: 'false' });
    service = await tenant('SERVICE');
    client = await tenant('CLIENT');
  });
  after(() => platform.stop());

  // ---- reading the books -------------------------------------------------------------------------------------------

  const portfolioDoc = async (db: Knex, id: string) => (await db('entities').where({ type: 'portfolios', id }).first()).doc;
  const cashOf = (doc: { portfolio: Record<string, number> }) => fromNumber(doc.portfolio.$EUR ?? 0);
  const divestOf = (doc: { config: { manager_settings: Record<string, unknown> } }) => doc.config.manager_settings.divest_amount as number | undefined;
  const transactionsOf = async (db: Knex, id: string) =>
    (await db('entities').where({ type: 'transactions', parent_id: id, deleted: false }).select('id', 'doc')).map((r) => ({ id: r.id as string, ...r.doc }));
  const instructionsOf = (db: Knex, id: string) =>
    db('broker_instructions')
      .select('id', 'kind', 'transaction_id', db.raw('amount::text as amount'), 'orders', 'result', 'sent_at', 'settled_at')
      .where({ portfolio_id: id });

  /** What the open instructions hold, as the rules say: payouts their amount, sent orders their need if all filled. */
  async function held(db: Knex, id: string): Promise<Money> {
    const open = (await instructionsOf(db, id)).filter((i) => i.settled_at === null);
    return sum(
      open.map((i) => {
        if (i.kind === 'WITHDRAWAL') return parseDecimal(i.amount);
        if (i.kind !== 'ORDERS' || i.sent_at === null) return ZERO;
        const need = sum((i.orders as { shares: string; price: string; cost: string }[]).map((o) => parseDecimal(o.shares).times(o.price).plus(o.cost)));
        return need.isNegative() ? ZERO : need;
      }),
    );
  }

  /** What everything the service must keep true after any step. */
  async function checkInvariants(model: Model, real: Real, step: string): Promise<void> {
    for (const p of real.portfolios.values()) {
      const doc = await portfolioDoc(real.db, p.id);
      const cash = cashOf(doc);
      assert.ok(!cash.isNegative(), `${step}: ${p.kind} cash ${toText(cash)} is below 0`);
      const transactions = await transactionsOf(real.db, p.id);
      const settled = transactions.filter((t) => t.status === 'SETTLED');
      const cashBooked = sum(settled.filter((t) => t.type === 'CASH').map((t) => parseDecimal(t.quantity)));
      const traded = sum(settled.filter((t) => t.type === 'ORDER').map((t) => parseDecimal(t.quantity).times(t.unit_price)));
      const costs = sum(
        (await instructionsOf(real.db, p.id))
          .filter((i) => i.kind === 'ORDERS' && i.settled_at !== null && i.result?.status === 'FILLED')
          .flatMap((i) => {
            const cost = new Map((i.orders as { isin: string; cost: string }[]).map((o) => [o.isin, parseDecimal(o.cost)]));
            return (i.result.fills as { isin: string }[]).map((f) => cost.get(f.isin)!);
          }),
      );
      const books = model.baseline.get(p.id)!.plus(cashBooked).minus(traded).minus(costs);
      assert.ok(books.eq(cash), `${step}: ${p.kind} holds ${toText(cash)} in cash, its bookings say ${toText(books)}`);
    }
    for (const k of model.keyed) {
      if (k.status >= 300) continue;
      const answer = JSON.parse(k.text);
      if (k.effect === 'deposit') {
        const booked = (await transactionsOf(real.db, k.portfolio.id)).filter((t) => t.external_id === k.key);
        assert.equal(booked.length, 1, `${step}: deposit ${k.key} booked ${booked.length} times`);
      } else if (k.effect === 'report') {
        const rows = await real.db('withdrawals').where({ portfolio_id: k.portfolio.id, external_id: k.key });
        assert.equal(rows.length, 1, `${step}: reported payout ${k.key} recorded ${rows.length} times`);
      } else if (k.effect === 'request') {
        const moves = (await instructionsOf(real.db, k.portfolio.id)).filter((i) => i.transaction_id === answer.id);
        assert.equal(moves.length, 1, `${step}: payout request ${k.key} queued ${moves.length} moves`);
      }
    }
  }

  // ---- commands ----------------------------------------------------------------------------------------------------

  type Command = AsyncCommand<Model, Real>;
  const command = (name: string, run: (model: Model, real: Real) => Promise<void>, check: (model: Readonly<Model>) => boolean = () => true): Command => ({
    check,
    run: async (model, real) => {
      await run(model, real);
      await checkInvariants(model, real, name);
    },
    toString: () => name,
  });

  /** Sends a POST, with an Idempotency-Key when `keyed`, and remembers it for replays. */
  async function post(model: Model, p: Portfolio, path: string, body: unknown, keyed: boolean, effect: Keyed['effect'], key: string) {
    const res = await p.tenant.api('POST', path, body, keyed ? { 'Idempotency-Key': key } : {});
    if (keyed) model.keyed.push({ key, path, body, status: res.status, text: res.text, portfolio: p, effect });
    return res;
  }

  /** A state of the portfolio that a refused request must leave as it was. */
  const snapshot = async (real: Real, p: Portfolio) => ({
    doc: await portfolioDoc(real.db, p.id),
    transactions: await transactionsOf(real.db, p.id),
    instructions: (await instructionsOf(real.db, p.id)).map((i) => [i.id, i.amount, i.sent_at, i.settled_at]),
    withdrawals: await real.db('withdrawals').where({ portfolio_id: p.id }),
  });

  const deposit = fc
    .record({ kind: fc.constantFrom<Kind>('SERVICE_USER', 'CLIENT_USER'), amount: fc.integer({ min: 1, max: 50_000 }), keyed: fc.boolean() })
    .map(({ kind, amount, keyed }) =>
      command(`deposit ${kind} ${amount / 100}${keyed ? ' keyed' : ''}`, async (model, real) => {
        const p = real.portfolios.get(kind)!;
        const key = `dep-${++keys}`;
        const body = { data: { amount: toText(parseDecimal(String(amount)).div(100)), currency: 'EUR', portfolio: p.id, external_id: key } };
        const res = await post(model, p, '/events/deposit/', body, keyed, 'deposit', key);
        assert.equal(res.status, p.tenant.integration === 'CLIENT' ? 201 : 202, res.text);
      }),
    );

  /** An amount of `permille` of the cash, at least a cent. */
  const share = (cash: Money, permille: number) => {
    const amount = cash.times(permille).div(1000).toDecimalPlaces(2, 1);
    return amount.lte(0) ? parseDecimal('0.01') : amount;
  };

  const request = fc.record({ permille: fc.integer({ min: 1, max: 1300 }), keyed: fc.boolean() }).map(({ permille, keyed }) =>
    command(`payout request ${permille}‰${keyed ? ' keyed' : ''}`, async (model, real) => {
      const p = real.portfolios.get('SERVICE_USER')!;
      const cash = cashOf(await portfolioDoc(real.db, p.id));
      const amount = share(cash, permille);
      const inFlight = (await instructionsOf(real.db, p.id)).some((i) => i.kind === 'WITHDRAWAL' && i.settled_at === null);
      const expected = !inFlight && cash.minus(await held(real.db, p.id)).gte(amount) ? 202 : 409;
      const before = await snapshot(real, p);
      const res = await post(model, p, `/portfolios/${p.id}/withdrawals/`, { amount: toText(amount), currency: 'EUR' }, keyed, 'request', `req-${++keys}`);
      assert.equal(res.status, expected, res.text);
      if (expected === 409) assert.deepEqual(await snapshot(real, p), before, 'a refused payout request changes nothing');
    }),
  );

  const report = fc
    .record({ kind: fc.constantFrom<Kind>('SERVICE_USER', 'SERVICE_ROBO', 'CLIENT_USER'), permille: fc.integer({ min: 1, max: 1300 }), keyed: fc.boolean() })
    .map(({ kind, permille, keyed }) =>
      command(`payout reported ${kind} ${permille}‰${keyed ? ' keyed' : ''}`, async (model, real) => {
        const p = real.portfolios.get(kind)!;
        const cash = cashOf(await portfolioDoc(real.db, p.id));
        const amount = share(cash, permille);
        const books = p.tenant.integration === 'SERVICE';
        const expected = !books || cash.minus(await held(real.db, p.id)).gte(amount) ? 201 : 409;
        const before = await snapshot(real, p);
        const key = `out-${++keys}`;
        const res = await post(
          model,
          p,
          '/events/withdraw/',
          { data: { amount: toText(amount), currency: 'EUR', portfolio: p.id, external_id: key } },
          keyed,
          'report',
          key,
        );
        assert.equal(res.status, expected, res.text);
        if (expected === 409) assert.deepEqual(await snapshot(real, p), before, 'a refused report changes nothing');
      }),
    );

  const divest = fc
    .record({
      kind: fc.constantFrom<Kind>('SERVICE_ROBO', 'CLIENT_PAPER'),
      amount: fc.oneof(fc.constant<'ALL' | number>('ALL'), fc.constant(0), fc.integer({ min: 1, max: 1500 })),
    })
    .map(({ kind, amount }) =>
      command(`divest_amount ${kind} ${amount === 'ALL' ? 'everything' : `${amount}‰`}`, async (_model, real) => {
        const p = real.portfolios.get(kind)!;
        const cash = cashOf(await portfolioDoc(real.db, p.id));
        const value = amount === 'ALL' ? EVERYTHING : amount === 0 ? 0 : share(cash, amount).toNumber();
        const res = await p.tenant.api('PATCH', `/portfolios/${p.id}`, { config: { manager_settings: { divest_amount: value } } });
        assert.equal(res.status, 200, res.text);
      }),
    );

  const holdings = fc
    .record({
      kind: fc.constantFrom<Kind>('SERVICE_USER', 'SERVICE_ROBO', 'CLIENT_USER', 'CLIENT_PAPER'),
      permille: fc.integer({ min: 0, max: 1500 }),
      shares: fc.integer({ min: 0, max: 20 }),
    })
    .map(({ kind, permille, shares }) =>
      command(`holdings PATCH ${kind} cash ${permille}‰ ${ISIN_C} ${shares}`, async (model, real) => {
        const p = real.portfolios.get(kind)!;
        const doc = await portfolioDoc(real.db, p.id);
        const cash = cashOf(doc);
        const next = cash.times(permille).div(1000).toDecimalPlaces(2, 1);
        const hold = await held(real.db, p.id);
        const expected = next.lt(cash) && !hold.isZero() && next.lt(hold) ? 409 : 200;
        const { [ISIN_C]: _, ...rest } = doc.portfolio as Record<string, number>;
        const body = { portfolio: { ...rest, $EUR: next.toNumber(), ...(shares > 0 ? { [ISIN_C]: shares } : {}) } };
        const before = await snapshot(real, p);
        const res = await p.tenant.api('PATCH', `/portfolios/${p.id}`, body);
        assert.equal(res.status, expected, res.text);
        if (expected === 409) assert.deepEqual(await snapshot(real, p), before, 'a refused PATCH changes nothing');
        else model.baseline.set(p.id, model.baseline.get(p.id)!.plus(next).minus(cash));
      }),
    );

  const execution = fc
    .record({
      kind: fc.constantFrom<Kind>('SERVICE_ROBO', 'CLIENT_PAPER'),
      isin: fc.constantFrom(ISIN_A, ISIN_B),
      shares: fc.integer({ min: -10, max: 10 }).filter((n) => n !== 0),
      price: fc.integer({ min: 100, max: 5000 }),
      cost: fc.integer({ min: 0, max: 100 }),
    })
    .map(({ kind, isin, shares, price, cost }) =>
      command(`execution ${kind} ${shares} ${isin} at ${price / 100} + ${cost / 100}`, async (_model, real) => {
        const p = real.portfolios.get(kind)!;
        const own = ((await portfolioDoc(real.db, p.id)).portfolio as Record<string, number>)[isin] ?? 0;
        // Sells no more than is held (as the optimizer would); nothing held makes it a buy.
        const traded = shares < 0 ? (own > 0 ? -Math.min(own, -shares) : -shares) : shares;
        const optimization = await insertOptimization(real.db, p.tenant.tenantId, p.id, { [isin]: order(traded, price / 100, cost / 100) });
        const fields = await executeOptimization(real.db, p.tenant.tenantId, p.id, optimization);
        assert.equal(fields?.execution_status, 'PENDING');
      }),
    );

  const settle = fc.constantFrom<BrokerMode>('SETTLE', 'SETTLE', 'SETTLE', 'REFUSE', 'LOSE_ANSWER', 'UNAVAILABLE').map((mode) =>
    command(`broker pass ${mode}`, async (_model, real) => {
      // The divest_amount and cash in force before the pass: a payout sent in it goes out no larger.
      const before = new Map<string, { divest: number | undefined; cash: Money; unsent: Set<string> }>();
      for (const p of real.portfolios.values()) {
        const doc = await portfolioDoc(real.db, p.id);
        const unsent = (await instructionsOf(real.db, p.id)).filter((i) => i.kind === 'WITHDRAWAL' && i.transaction_id === null && i.sent_at === null);
        before.set(p.id, { divest: divestOf(doc), cash: cashOf(doc), unsent: new Set(unsent.map((i) => i.id)) });
      }
      real.broker.state.mode = mode;
      await settleOnce(real.db, { broker: real.broker.broker });
      for (const p of real.portfolios.values()) {
        const was = before.get(p.id)!;
        for (const i of await instructionsOf(real.db, p.id)) {
          if (!was.unsent.has(i.id) || i.sent_at === null) continue;
          const amount = parseDecimal(i.amount);
          const limit = was.divest === undefined ? ZERO : was.divest >= EVERYTHING ? was.cash : fromNumber(was.divest);
          assert.ok(amount.lte(limit), `a payout of ${toText(amount)} went out with divest_amount ${String(was.divest)} in force`);
        }
      }
      const amounts = new Map<string, string | undefined>();
      for (const call of real.broker.calls) {
        if (amounts.has(call.id)) assert.equal(call.amount, amounts.get(call.id), `instruction ${call.id} was sent with two amounts`);
        amounts.set(call.id, call.amount);
      }
    }),
  );

  // A refusal is not kept under its key (it changed nothing, so sending it again is a new attempt): only answered
  // requests are replayed.
  const answered = (model: Readonly<Model>) => model.keyed.filter((k) => k.status < 300);
  const replay = fc.nat().map((n) =>
    command(
      `replay keyed #${n}`,
      async (model, real) => {
        const done = answered(model);
        const k = done[n % done.length]!;
        const before = await snapshot(real, k.portfolio);
        const res = await k.portfolio.tenant.api('POST', k.path, k.body, { 'Idempotency-Key': k.key });
        assert.deepEqual([res.status, res.text], [k.status, k.text], `replay of ${k.key}`);
        assert.deepEqual(await snapshot(real, k.portfolio), before, `replay of ${k.key} changes nothing`);
      },
      (model) => answered(model).length > 0,
    ),
  );

  // ---- the runs ----------------------------------------------------------------------------------------------------

  /** Settles whatever a finished sequence left open, with its broker answering, so the next starts from a quiet one. */
  async function drain(last: { model: Model; real: Real }, step: string): Promise<void> {
    const { model, real } = last;
    real.broker.state.mode = 'SETTLE';
    for (let pass = 0; ; pass++) {
      const open = await real.db('broker_instructions').whereNull('settled_at').count<{ count: string }[]>('* as count');
      if (open[0]!.count === '0') break;
      if (pass === 10) throw new Error('instructions still open after ten passes');
      await settleOnce(real.db, { broker: real.broker.broker });
    }
    await checkInvariants(model, real, step);
  }

  async function setup(): Promise<{ model: Model; real: Real }> {
    if (previous) await drain(previous, 'the previous sequence, drained');
    const create = async (kind: Kind, t: Tenant, body: unknown): Promise<Portfolio> => {
      const res = await t.api('POST', '/portfolios/', body);
      assert.equal(res.status, 201, res.text);
      return { kind, id: res.body.id, tenant: t };
    };
    const portfolios = new Map<Kind, Portfolio>();
    const start: [Kind, Tenant, unknown, string][] = [
      ['SERVICE_USER', service, build.portfolio(service.owner, { portfolio: { $EUR: 100 }, brokerage_account: account }), '100'],
      ['SERVICE_ROBO', service, build.roboPortfolio(service.owner, {}, { portfolio: { $EUR: 200, [ISIN_A]: 10 }, brokerage_account: account }), '200'],
      ['CLIENT_USER', client, build.portfolio(client.owner, { portfolio: { $EUR: 50 }, brokerage_account: account }), '50'],
      ['CLIENT_PAPER', client, build.roboPortfolio(client.owner, {}, { money_type: 'PAPER_MONEY', portfolio: { $EUR: 150.5, [ISIN_B]: 5 } }), '150.5'],
    ];
    const baseline = new Map<string, Money>();
    for (const [kind, t, body, cash] of start) {
      const p = await create(kind, t, body);
      portfolios.set(kind, p);
      baseline.set(p.id, parseDecimal(cash));
    }
    previous = { model: { baseline, keyed: [] }, real: { db: platform.database.db, portfolios, broker: steeredBroker() } };
    return previous;
  }

  it('keeps the cash at or above 0, equal to its bookings, payouts within divest_amount, one effect per key', async () => {
    const commands = fc.commands([deposit, request, report, divest, divest, divest, holdings, execution, settle, settle, settle, replay], {
      maxCommands: 40,
      size: 'max',
    });
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        await fc.asyncModelRun(setup, cmds);
      }),
      { numRuns: Number(process.env.CASH_MODEL_RUNS ?? 20), seed: Number(process.env.CASH_MODEL_SEED ?? 20_261_127), endOnFailure: true },
    );
    assert.ok(previous, 'no sequence ran');
    await drain(previous, 'the last sequence, drained');
  });
});
