import assert from 'node:assert/strict';
import { tableFromIPC } from 'apache-arrow';
import { parseDecimal } from '@platform/shared';
import { assertProblem } from '@platform/test-support/http';
import { startTestPlatform, type TestPlatform } from '@platform/test-support/platform';
import { dataClient } from './support/data-client.ts';

// The run's sample reference file: 2 years of weekdays ending Friday 2026-11-20.
const path = (base: string, quote: string, from: string, to: string) => `/data/fx-rates/${base}/${quote}?from=${from}&to=${to}`;
const weekdays = (from: string, to: string) => {
  const out: string[] = [];
  for (let d = new Date(`${from}T00:00:00Z`); d <= new Date(`${to}T00:00:00Z`); d.setUTCDate(d.getUTCDate() + 1))
    if (d.getUTCDay() % 6 !== 0) out.push(d.toISOString().slice(0, 10));
  return out;
};

describe('GET /data/fx-rates/{base}/{quote}', function () {
  this.timeout(120_000);
  let platform: TestPlatform;
  let client: ReturnType<typeof dataClient>;
  const FROM = '2026-10-01';
  const TO = '2026-11-22';

  before(async () => {
    platform = await startTestPlatform();
    client = dataClient(platform.dataUrl, await platform.tenant());
  });
  after(() => platform?.stop());

  it('gives the EUR leg of every weekday of the range as published, and a cross rate equal to rate(quote) / rate(base)', async () => {
    const usd = await client.get(path('EUR', 'USD', FROM, TO));
    assert.equal(usd.status, 200, usd.text);
    assert.deepEqual(
      usd.body.data.rates.map((p: { date: string }) => p.date),
      weekdays(FROM, TO),
    );
    assert.deepEqual({ ...usd.body.data, rates: undefined }, { base: 'EUR', quote: 'USD', from: FROM, to: TO, rates: undefined });
    const gbp = await client.get(path('EUR', 'GBP', FROM, TO));
    const cross = await client.get(path('GBP', 'USD', FROM, TO));
    assert.equal(cross.status, 200, cross.text);
    assert.equal(cross.body.data.rates.length, usd.body.data.rates.length);
    cross.body.data.rates.forEach((p: { date: string; rate: number }, k: number) => {
      const [u, g] = [usd.body.data.rates[k], gbp.body.data.rates[k]];
      assert.equal(p.date, u.date);
      const expected = parseDecimal(String(u.rate))
        .div(parseDecimal(String(g.rate)))
        .toSignificantDigits(12)
        .toNumber();
      assert.equal(p.rate, expected, p.date);
    });
    // Plausible levels: a dollar of about 0.9 EUR, a pound of about 1.2 USD.
    const inverse = await client.get(path('USD', 'EUR', FROM, TO));
    assert.ok(Math.abs(inverse.body.data.rates[0].rate * usd.body.data.rates[0].rate - 1) < 1e-11);
    assert.ok(
      cross.body.data.rates.every((p: { rate: number }) => p.rate > 0.8 && p.rate < 2),
      cross.text,
    );
  });

  it('answers the same numbers as an Arrow stream, for either Arrow type; anything else is a 406', async () => {
    const json = await client.get(path('JPY', 'CHF', FROM, TO));
    for (const type of ['application/vnd.apache.arrow.stream', 'application/octet-stream']) {
      const arrow = await client.bytes(path('JPY', 'CHF', FROM, TO), type);
      assert.equal(arrow.status, 200);
      assert.equal(arrow.contentType, type);
      const table = tableFromIPC(arrow.bytes);
      assert.deepEqual(
        table.schema.fields.map((f) => [f.name, String(f.type)]),
        [
          ['date', 'Date32<DAY>'],
          ['rate', 'Float64'],
        ],
      );
      const rows = table.toArray().map((r) => ({ date: new Date(r.date).toISOString().slice(0, 10), rate: r.rate }));
      assert.deepEqual(rows, json.body.data.rates);
    }
    assertProblem(await client.get(path('JPY', 'CHF', FROM, TO), { accept: 'text/html' }), 406, 'not_acceptable');
  });

  it('leaves out dates without rates: a weekend range is an empty series', async () => {
    const res = await client.get(path('EUR', 'USD', '2026-11-21', '2026-11-22'));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data.rates, []);
  });

  it('refuses bad requests with the parameter named, leaking nothing, and answers the same afterwards', async () => {
    const before = await client.get(path('EUR', 'USD', FROM, TO));
    // A path parameter that breaks its pattern names nothing, as any malformed id in a path (no loc).
    const cases: [string, number, string, unknown[] | null][] = [
      [path('XXX', 'USD', FROM, TO), 404, 'not_found', ['path', 'base']],
      [path('EUR', 'ZZZ', FROM, TO), 404, 'not_found', ['path', 'quote']],
      [path('usd', 'EUR', FROM, TO), 404, 'not_found', null],
      [path('EUR', 'USD', '2026-02-30', TO), 400, 'invalid_parameter', ['query', 'from']],
      [path('EUR', 'USD', FROM, 'tomorrow'), 400, 'invalid_parameter', ['query', 'to']],
      [`/data/fx-rates/EUR/USD?from=${FROM}`, 400, 'invalid_parameter', ['query', 'to']],
      [path('EUR', 'USD', TO, FROM), 422, 'validation_failed', ['query', 'to']],
      [path('EUR', 'USD', '1990-01-01', '2026-01-01'), 422, 'validation_failed', ['query', 'to']],
      [path('USD', 'USD', FROM, TO), 422, 'validation_failed', ['path', 'quote']],
    ];
    for (const [url, status, code, loc] of cases) {
      const res = await client.get(url);
      assert.equal(res.status, status, `${url}: ${res.text}`);
      assertProblem(res, status, code);
      assert.ok(loc === null || res.body.errors.some((e: { loc: unknown[] }) => JSON.stringify(e.loc) === JSON.stringify(loc)), `${url}: ${res.text}`);
      assert.doesNotMatch(res.text, /select|fx_rates|duckdb|ref_\d|\bat .*\.ts/i, url);
    }
    const unauthenticated = await fetch(`${platform.dataUrl}${path('EUR', 'USD', FROM, TO)}`);
    assert.equal(unauthenticated.status, 401);
    assert.deepEqual((await client.get(path('EUR', 'USD', FROM, TO))).body, before.body);
  });
});
