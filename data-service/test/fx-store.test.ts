import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { parseDecimal, toText } from '@platform/shared';
import { testWorkDir } from '@platform/test-support/database';
import { convert, crossRate, FxRateUnavailable } from '../src/fx/convert.ts';
import { fxRates } from '../src/fx/store.ts';
import { openDuckStore, type DuckStore } from '../src/store/duckdb.ts';
import { buildReferenceFile } from '../src/store/reference-files.ts';

/** A reference file's rates: currency → [date, units per 1 EUR]. */
const fill = (rates: Record<string, [string, string][]>) => async (conn: DuckDBConnection) => {
  for (const [currency, rows] of Object.entries(rates))
    for (const [date, rate] of rows) await conn.run('insert into fx_rates values ($1, $2::date, $3::decimal(20, 10))', [currency, date, rate]);
};

describe('fx: reading rates from the reference file', function () {
  this.timeout(60_000);
  let dir: string;
  let store: DuckStore | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(testWorkDir(), 'fx-store-'));
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('reads the rates of the range and the last one before it, exactly, and converts with them', async () => {
    const referenceDir = join(dir, 'reference');
    await buildReferenceFile(
      referenceDir,
      'rates',
      fill({
        USD: [
          ['2025-12-30', '1.0870'],
          ['2025-12-31', '1.0850'],
          ['2026-01-02', '1.0800'],
          ['2026-01-05', '1.0900'],
        ],
        GBP: [['2026-01-02', '0.8500']],
        KRW: [['2026-01-02', '1512.34']],
      }),
    );
    store = await openDuckStore({ path: join(dir, 'replica.duckdb'), referenceDir });
    const { read, series, currencies } = fxRates(store);
    assert.deepEqual([...(await currencies())].sort(), ['EUR', 'GBP', 'KRW', 'USD']);
    const rates = await read(['GBP', 'USD', 'EUR'], { from: '2026-01-01', to: '2026-01-04' });
    assert.deepEqual(
      [...rates].map(([c, rows]) => [c, rows.map((r) => `${r.date}=${toText(r.rate)}`)]),
      [
        ['GBP', ['2026-01-02=0.85']],
        ['USD', ['2025-12-31=1.085', '2026-01-02=1.08']],
      ],
    );
    // Sunday 2026-01-04 converts with Friday's rates: 100 GBP = 100 × 1.08 / 0.85 USD.
    assert.equal(convert(rates, parseDecimal('100'), 'GBP', 'USD', '2026-01-04', 5).toSignificantDigits(15).toFixed(), '127.058823529412');
    assert.equal(toText(crossRate(rates, 'EUR', 'USD', '2026-01-01', 5)), '1.085');
    assert.throws(
      () => crossRate(rates, 'GBP', 'USD', '2026-01-01', 5),
      (e: unknown) => e instanceof FxRateUnavailable && e.reason === 'missing',
    );
    assert.deepEqual(await read(['EUR'], { from: '2026-01-01', to: '2026-01-04' }), new Map());
    assert.deepEqual(await read(['CHF'], { from: '2026-01-01', to: '2026-01-04' }), new Map());
    // The same rates as binary floats, on days since 1970-01-01 (2025-12-31 is day 20,453).
    const numbers = await series(['USD', 'GBP', 'EUR', 'CHF'], { from: '2026-01-01', to: '2026-01-05' });
    assert.deepEqual(
      [...numbers].map(([c, s]) => [c, [...s.days], [...s.perEuro]]),
      [
        ['GBP', [20455], [0.85]],
        ['USD', [20453, 20455, 20458], [1.085, 1.08, 1.09]],
      ],
    );
  });

  it('finds no rates in a reference file written before rates existed', async () => {
    const referenceDir = join(dir, 'reference');
    await buildReferenceFile(referenceDir, 'old', async (conn) => conn.run('drop table fx_rates'));
    store = await openDuckStore({ path: join(dir, 'replica.duckdb'), referenceDir });
    const { read, series, currencies } = fxRates(store);
    assert.deepEqual([...(await currencies())], ['EUR']);
    assert.deepEqual(await read(['USD'], { from: '2026-01-01', to: '2026-01-31' }), new Map());
    assert.deepEqual(await series(['USD'], { from: '2026-01-01', to: '2026-01-31' }), new Map());
  });

  it('reads the new rates once a new reference file is attached', async () => {
    const referenceDir = join(dir, 'reference');
    await buildReferenceFile(referenceDir, 'v1', fill({ USD: [['2026-01-02', '1.0800']] }));
    store = await openDuckStore({ path: join(dir, 'replica.duckdb'), referenceDir });
    const { read } = fxRates(store);
    const range = { from: '2026-01-02', to: '2026-01-02' };
    assert.equal(toText((await read(['USD'], range)).get('USD')![0]!.rate), '1.08');
    await new Promise((r) => setTimeout(r, 5)); // the next version sorts after the first
    await buildReferenceFile(referenceDir, 'v2', fill({ USD: [['2026-01-02', '1.0811']] }));
    assert.equal(await store.reload(), true);
    assert.equal(toText((await read(['USD'], range)).get('USD')![0]!.rate), '1.0811');
  });
});
