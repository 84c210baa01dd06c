import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { newUlid } from '@platform/shared';
import { testWorkDir } from '@platform/test-support/database';
import { fxRates } from '../../src/fx/store.ts';
import { ARROW_STREAM, HISTORY_REFUSAL, MAX_HISTORY_POINTS, historyAnswerer } from '../../src/history/responder.ts';
import { openDuckStore, type DuckStore } from '../../src/store/duckdb.ts';

// The data service's answer to one history request, on the sample reference data (docs/adr/0058-portfolio-history.md).
describe('the history reply of the data service', () => {
  let duck: DuckStore;
  let historyReply: (tenantId: string, body: unknown) => ReturnType<ReturnType<typeof historyAnswerer>>;
  let isin: string;
  let to: string;
  const request = (over: Record<string, unknown> = {}) => ({
    tenant_id: 'acme',
    portfolio_id: 'P01JP9ZMQCN0XG3YNRRKJ6T0FZ3',
    base_currency: 'EUR',
    from: '2000-01-03',
    to,
    frequency: 'M',
    format: 'json',
    versions: [{ from: '2000-01-01T00:00:00.000Z', holdings: { [isin]: 2, $EUR: 10 } }],
    flows: [],
    ...over,
  });
  /** A computed history: the HistoryAnswer itself, as JSON. */
  const answered = (reply: { data: Uint8Array | string; contentType: string }) => {
    assert.equal(reply.contentType, 'application/json', String(reply.data).slice(0, 300));
    return JSON.parse(String(reply.data));
  };
  /** A refusal, told apart by its Content-Type. */
  const refused = (reply: { data: Uint8Array | string; contentType: string }) => {
    assert.equal(reply.contentType, HISTORY_REFUSAL, String(reply.data).slice(0, 300));
    return JSON.parse(String(reply.data));
  };

  before(async () => {
    duck = await openDuckStore({ path: join(testWorkDir(), `history-reply-${newUlid()}.duckdb`), referenceDir: join(testWorkDir(), 'reference') });
    historyReply = historyAnswerer({ duck, fx: fxRates(duck).series, fxMaxAgeDays: 5 });
    const row = await duck.use(async ({ conn, ref }) =>
      (
        await conn.runAndReadAll(
          `select isin, min(date)::varchar, max(date)::varchar from ${ref}.prices where isin in (select isin from ${ref}.instruments where currency = 'EUR') group by isin order by isin limit 1`,
        )
      ).getRows(),
    );
    isin = String(row[0]![0]);
    // From the instrument's first close to its last, monthly.
    to = String(row[0]![2]);
  });
  after(() => duck?.close());

  it('answers the history as JSON, and the same points as Arrow when asked', async () => {
    const first = await duck.use(async ({ conn, ref }) =>
      String((await conn.runAndReadAll(`select min(date)::varchar from ${ref}.prices where isin = $1`, [isin])).getRows()[0]![0]),
    );
    const body = request({ from: first, versions: [{ from: `${first}T00:00:00.000Z`, holdings: { [isin]: 2, $EUR: 10 } }] });
    const json = answered(await historyReply('acme', body));
    assert.ok(json.points.length > 2, JSON.stringify(json).slice(0, 300));
    assert.ok(json.points.every((p: { value: number }) => p.value > 10));
    const arrow = await historyReply('acme', { ...body, format: 'arrow' });
    assert.equal(arrow.contentType, ARROW_STREAM);
    const table = tableFromIPC(arrow.data as Uint8Array);
    assert.deepEqual(
      table.getChild('value')!.toArray().slice(),
      Float64Array.from(json.points, (p: { value: number }) => p.value),
    );
  });

  it("refuses a request breaking the contract, or naming another tenant than the subject's", async () => {
    assert.equal(refused(await historyReply('acme', { ...request(), extra: 1 })).code, 'invalid_request');
    assert.equal(refused(await historyReply('acme', undefined)).code, 'invalid_request');
    assert.deepEqual(refused(await historyReply('beta', request())), {
      code: 'invalid_request',
      loc: ['tenant_id'],
      detail: "is not the subject's tenant",
    });
  });

  it('refuses a rate older than FX_MAX_AGE_DAYS on a day it converts a holding, naming the pair', async () => {
    const last = await duck.use(async ({ conn, ref }) =>
      String((await conn.runAndReadAll(`select max(date)::varchar from ${ref}.fx_rates where currency = 'USD'`)).getRows()[0]![0]),
    );
    const shifted = (days: number) => new Date(Date.parse(`${last}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
    // A week past the last published USD rate: its last days convert with a rate 7 days old.
    const body = request({ from: shifted(-14), to: shifted(7), frequency: 'D', versions: [{ from: `${shifted(-14)}T00:00:00.000Z`, holdings: { $USD: 10 } }] });
    const refusal = refused(await historyAnswerer({ duck, fx: fxRates(duck).series, fxMaxAgeDays: 6 })('acme', body));
    assert.equal(refusal.code, 'unknown_value');
    assert.deepEqual(refusal.loc, ['versions', 0, 'holdings', '$USD']);
    assert.equal(refusal.detail, `EUR/USD rate of ${last} is older than 6 days on ${shifted(7)} (for USD/EUR)`);
    const answer = answered(await historyAnswerer({ duck, fx: fxRates(duck).series, fxMaxAgeDays: 7 })('acme', body));
    assert.equal(answer.points.at(-1).date, shifted(7), 'a rate exactly 7 days old converts when the limit is 7');
  });

  it(`refuses more than ${MAX_HISTORY_POINTS} points at frequency, and what the calculator cannot use at its place`, async () => {
    const long = refused(await historyReply('acme', request({ from: '1990-01-01', to: '2010-01-01', frequency: 'D' })));
    assert.equal(long.code, 'too_many_points');
    assert.deepEqual(long.loc, ['frequency']);
    assert.match(long.detail, /W or M/);
    const unknown = refused(await historyReply('acme', request({ versions: [{ from: '2000-01-01T00:00:00.000Z', holdings: { ZZ0000000000: 1 } }] })));
    assert.deepEqual(unknown, {
      code: 'unknown_value',
      loc: ['versions', 0, 'holdings', 'ZZ0000000000'],
      detail: 'no prices for instrument ZZ0000000000',
    });
    const inverted = refused(await historyReply('acme', request({ from: '2020-02-01', to: '2020-01-01' })));
    assert.deepEqual(inverted.loc, ['to']);
  });
});
