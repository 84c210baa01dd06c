import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { testWorkDir } from '@platform/test-support/database';
import { fxColumns, fxRowValidator } from '../src/ingest/fx-rules.ts';
import { ingestReferenceData } from '../src/ingest/ingest.ts';
import type { FxFileReport } from '../src/ingest/fx-rates.ts';

/** A file in the ECB's form: the header, then one line per date, each with a trailing comma as eurofxref-hist.csv has. */
const ecbFile = (currencies: string[], rows: string[][]) => [['Date', ...currencies], ...rows].map((r) => `${r.join(',')},`).join('\n') + '\n';

async function published(file: string, sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

describe('ingest: ECB exchange rates, row rules', () => {
  it('reads the header: Date and the currencies, ignoring EUR and the unnamed trailing column', () => {
    const columns = fxColumns(['Date', 'USD', 'jpy', 'EUR', 'column4', 'Notes']);
    assert.equal(columns.date, 'Date');
    assert.deepEqual(
      [...columns.currencies],
      [
        ['USD', 'USD'],
        ['JPY', 'jpy'],
      ],
    );
    assert.deepEqual(columns.ignored, ['EUR', 'column4', 'Notes']);
    assert.throws(() => fxColumns(['USD', 'JPY']), /needs a Date column/);
    assert.throws(() => fxColumns(['Date', 'column1']), /needs a Date column and a column per currency/);
  });

  it('keeps the good values of a row, skips N/A, refuses bad values alone and bad or repeated dates whole', () => {
    const check = fxRowValidator(['USD', 'JPY', 'CYP']);
    assert.deepEqual(check({ DATE: '2026-01-05', USD: '1.0900', JPY: '160.00', CYP: 'N/A' }, 1), {
      row: {
        date: '2026-01-05',
        rates: [
          { currency: 'USD', rate: '1.0900' },
          { currency: 'JPY', rate: '160.00' },
        ],
      },
      reasons: [],
    });
    assert.deepEqual(check({ DATE: '2026-01-02', USD: '1,08', JPY: '0.0000', CYP: '0.5763' }, 2), {
      row: { date: '2026-01-02', rates: [{ currency: 'CYP', rate: '0.5763' }] },
      reasons: ["USD '1,08' is not a rate (a positive decimal such as 1.0823, or N/A)", "JPY '0.0000' is not a rate (it must be above 0)"],
    });
    for (const bad of ['-1.08', '1e3', 'abc', '12345678901', '1.12345678901']) assert.equal(check({ DATE: '2026-01-06', USD: bad }, 3).reasons.length, 1, bad);
    assert.deepEqual(check({ DATE: '2026-01-05', USD: '1.0' }, 4), { reasons: ['duplicate DATE 2026-01-05 (first at row 1)'] });
    assert.deepEqual(check({ DATE: '05/01/2026', USD: '1.0' }, 5), { reasons: ["DATE '05/01/2026' is not a date (YYYY-MM-DD)"] });
    assert.deepEqual(check({ DATE: '2026-02-30', USD: '1.0' }, 6), { reasons: ["DATE '2026-02-30' is not a date (YYYY-MM-DD)"] });
    assert.deepEqual(check({ DATE: null, USD: '1.0' }, 7), { reasons: ['DATE is missing'] });
    assert.deepEqual(check({ DATE: '2026-01-07' }, 8), { row: { date: '2026-01-07', rates: [] }, reasons: [] });
  });
});

describe('ingest: ECB exchange rates into the reference file', function () {
  this.timeout(120_000);
  let dir: string;
  let instruments: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(testWorkDir(), 'fx-ingest-'));
    instruments = join(dir, 'instruments.csv');
    await writeFile(instruments, 'ISIN,NAME,CURRENCY\nUS0378331005,Apple Inc.,USD\n');
  });

  it('stores the accepted rates exactly, one row per currency and date, and reports the rejected rows with their reasons', async () => {
    const rates = join(dir, 'eurofxref-hist.csv');
    await writeFile(
      rates,
      ecbFile(
        ['USD', 'JPY', 'CYP'],
        [
          ['2026-01-06', '1.0935', '160.25', 'N/A'],
          ['2026-01-05', '1.0900', 'abc', 'N/A'],
          ['2026-01-05', '1.0999', '161.00', 'N/A'],
          ['2026-13-01', '1.0000', '150.00', 'N/A'],
          ['2008-01-02', '1.4717', '164.88', '0.58530'],
        ],
      ),
    );
    const report = await ingestReferenceData({ instruments, fxRates: rates }, { referenceDir: join(dir, 'reference') });
    const fx = report.files.find((f) => f.kind === 'fx_rates') as FxFileReport;
    assert.deepEqual(
      { rows: fx.rows, accepted: fx.accepted, rejected: fx.rejected, ignored: fx.ignored_columns },
      { rows: 5, accepted: 2, rejected: 3, ignored: ['column4'] },
    );
    assert.deepEqual(fx.rejects, [
      { row: 2, reason: "JPY 'abc' is not a rate (a positive decimal such as 1.0823, or N/A) (the row's other rates were kept)" },
      { row: 3, reason: 'duplicate DATE 2026-01-05 (first at row 2)' },
      { row: 4, reason: "DATE '2026-13-01' is not a date (YYYY-MM-DD)" },
    ]);
    assert.equal(report.fx_rates, 6);
    assert.deepEqual(
      await published(report.reference_file, `select currency, date::varchar as date, rate::varchar as rate from fx_rates order by currency, date`),
      [
        { currency: 'CYP', date: '2008-01-02', rate: '0.5853000000' },
        { currency: 'JPY', date: '2008-01-02', rate: '164.8800000000' },
        { currency: 'JPY', date: '2026-01-06', rate: '160.2500000000' },
        { currency: 'USD', date: '2008-01-02', rate: '1.4717000000' },
        { currency: 'USD', date: '2026-01-05', rate: '1.0900000000' },
        { currency: 'USD', date: '2026-01-06', rate: '1.0935000000' },
      ],
    );
    const rejects = (await readFile(fx.rejects_file!, 'utf8')).trim().split('\n');
    assert.equal(rejects[0], 'ROW,REASON,DATE,USD,JPY,CYP');
    assert.equal(rejects.length, 4);
    assert.match(rejects[1]!, /^2,.*abc.*,2026-01-05,1.0900,abc,N\/A$/);
  });

  it('publishes nothing when the rates file has no Date or no currency column', async () => {
    const rates = join(dir, 'rates.csv');
    await writeFile(rates, 'Day,USD\n2026-01-05,1.09\n');
    const referenceDir = join(dir, 'reference');
    await assert.rejects(ingestReferenceData({ instruments, fxRates: rates }, { referenceDir }), /needs a Date column/);
    await assert.rejects(ingestReferenceData({ instruments, fxRates: join(dir, 'missing.csv') }, { referenceDir }), /no such file/);
    assert.deepEqual(
      (await readdir(referenceDir).catch(() => [])).filter((n) => n.endsWith('.duckdb')),
      [],
    );
  });
});
