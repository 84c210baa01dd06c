import assert from 'node:assert/strict';
import { existsSync, readlinkSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { testWorkDir } from '@platform/test-support/database';
import { startTestPlatform } from '@platform/test-support/platform';
import { ingestReferenceData, pruneReferenceFiles } from '../src/ingest/ingest.ts';
import { isinCheckDigit, isinProblem, isValidIsin } from '../src/domain/isin.ts';
import { consoleProgress } from '../src/ingest/progress.ts';
import { instrumentValidator, matchColumns, parseDate, priceChecksSql } from '../src/ingest/rules.ts';

type Row = Record<string, unknown>;

/** Runs SQL on a throwaway in-memory DuckDB (writing Parquet fixtures, reading results). */
async function duck<T>(work: (run: (sql: string) => Promise<Row[]>) => Promise<T>, path = ':memory:', readOnly = false): Promise<T> {
  const instance = await DuckDBInstance.create(path, readOnly ? { access_mode: 'READ_ONLY' } : {});
  const conn = await instance.connect();
  try {
    return await work(async (sql) => (await conn.runAndReadAll(sql)).getRowObjectsJson() as Row[]);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

const readPublished = (file: string, sql: string) => duck((run) => run(sql), file, true);

describe('ingest: ISINs and row rules', () => {
  it('accepts ISINs with a correct check digit and says why others are refused', () => {
    for (const valid of ['US0378331005', 'DE0007164600', 'AU0000XVGZA3', 'IE00B4L5Y983', 'GB0002374006']) assert.equal(isinProblem(valid), undefined, valid);
    assert.equal(isinCheckDigit('US037833100'), 5);
    assert.match(isinProblem('US0378331006')!, /check digit 6, expected 5/);
    assert.match(isinProblem('DE0007164601')!, /expected 0/);
    for (const malformed of ['US037833100', 'US03783310055', 'U10378331005', 'us0378331005', 'US037833100X', 'US-378331005'])
      assert.match(isinProblem(malformed)!, /is not two letters/, malformed);
    assert.equal(isinProblem(''), 'ISIN is missing');
    assert.equal(isValidIsin('US0378331005'), true);
  });

  it('checks instrument rows: required fields, codes, numbers, fractions, dates, duplicates', () => {
    const check = instrumentValidator();
    const ok = check(
      {
        ISIN: ' us0378331005 ',
        NAME: 'Apple Inc.',
        ASSET_CLASS: 'equity',
        CURRENCY: 'usd',
        PRICE: '213.490',
        DIVIDEND_YIELD: '0.0045',
        PRICE_DATE: '2026-11-20',
      },
      1,
    );
    assert.ok('row' in ok);
    assert.deepEqual(
      [ok.row.isin, ok.row.asset_class, ok.row.currency, ok.row.price, ok.row.dividend_yield, ok.row.ter],
      ['US0378331005', 'EQUITY', 'USD', '213.490', 0.0045, null],
    );
    const reason = (raw: Record<string, string | null>) => {
      const r = instrumentValidator()(raw, 1);
      return 'reason' in r ? r.reason : undefined;
    };
    assert.equal(reason({ ISIN: 'DE0007164600', NAME: ' ' }), 'NAME is missing');
    assert.match(reason({ ISIN: 'DE0007164600', NAME: 'SAP', PRICE: '1,234.5' })!, /PRICE '1,234.5' is not a number/);
    assert.match(reason({ ISIN: 'DE0007164600', NAME: 'SAP', PRICE: '0' })!, /PRICE 0 is out of range/);
    assert.match(reason({ ISIN: 'DE0007164600', NAME: 'SAP', DIVIDEND_YIELD: '2.1' })!, /DIVIDEND_YIELD 2.1 is out of range \(a fraction: 0.021 is 2.1 %\)/);
    assert.match(reason({ ISIN: 'DE0007164600', NAME: 'SAP', CURRENCY: 'EURO' })!, /CURRENCY 'EURO' is not a code like EUR/);
    assert.match(reason({ ISIN: 'DE0007164600', NAME: 'SAP', ASSET_CLASS: 'Real Estate' })!, /ASSET_CLASS 'REAL ESTATE' is not a code/);
    assert.match(reason({ ISIN: 'DE0007164600', NAME: 'SAP', PRICE_DATE: '2026-02-30' })!, /PRICE_DATE '2026-02-30' is not a date/);
    assert.match(reason({ ISIN: 'DE0007164600', NAME: 'SAP', MARKET_CAP: 'NaN' })!, /not a number/);
    assert.deepEqual(check({ ISIN: 'US0378331005', NAME: 'Apple again' }, 8), { reason: 'duplicate ISIN US0378331005 (first at row 1)' });
    assert.throws(() => parseDate({ D: '20261120' }, 'D'), /not a date/);
  });

  it('maps headers case-insensitively, refuses a file without a required column, lists ignored ones', () => {
    const { columns, ignored } = matchColumns('instruments', ['isin', 'Name', 'PRICE', 'Vendor_Code']);
    assert.deepEqual([...columns.keys()], ['ISIN', 'NAME', 'PRICE']);
    assert.deepEqual(ignored, ['Vendor_Code']);
    assert.throws(() => matchColumns('prices', ['ISIN', 'CLOSE']), /no DATE column/);
    assert.throws(() => matchColumns('factors', ['ISIN', 'SCORE']), /none of the metric columns/);
  });

  it('checks price rows in SQL: unknown ISIN, bad date, bad close, duplicate date', async () => {
    const rows = await duck(async (run) => {
      await run(`create table instruments (isin varchar)`);
      await run(`insert into instruments values ('US0378331005')`);
      await run(`create table stage ("ISIN" varchar, "DATE" varchar, "CLOSE" varchar)`);
      await run(`insert into stage values ('US0378331005', '2026-11-19', '210.5'), ('US0378331006', '2026-11-19', '1'), ('US0378331005', '2026-11-31', '1'),
        ('US0378331005', '2026-11-20', '-3'), ('US0378331005', '2026-11-20', 'abc'), ('US0378331005', '2026-11-20', '212'), ('us0378331005', '2026-11-19', '211'), (null, '2026-11-19', '1')`);
      return run(`select rid, reason from (${priceChecksSql('stage', 'instruments')}) order by rid`);
    });
    assert.deepEqual(
      rows.map((r) => r.reason),
      [
        null,
        'ISIN US0378331006 is not among the accepted instruments',
        "DATE '2026-11-31' is not a date (YYYY-MM-DD)",
        "CLOSE '-3' is not a positive number",
        "CLOSE 'abc' is not a positive number",
        null,
        'duplicate ISIN and DATE (first at row 1)',
        'ISIN is missing',
      ],
    );
  });
});

describe('ingest: progress on a terminal and in logs', () => {
  const fakeStream = (isTTY: boolean) => {
    const out: string[] = [];
    return { out, stream: { isTTY, write: (s: string) => out.push(s) } as unknown as NodeJS.WriteStream };
  };

  it('writes a plain line per step and per further tenth when not a terminal', () => {
    const { out, stream } = fakeStream(false);
    const progress = consoleProgress(stream);
    for (const fraction of [0, 0.05, 0.12, 0.15, 0.5, 1]) progress({ step: 'prices: reading', fraction });
    progress({ step: 'writing the reference file' });
    progress.finish();
    assert.deepEqual(out, [
      'prices: reading 0 %\n',
      'prices: reading 12 %\n',
      'prices: reading 50 %\n',
      'prices: reading 100 %\n',
      'writing the reference file\n',
    ]);
  });

  it('redraws one bar per step on a terminal', () => {
    const { out, stream } = fakeStream(true);
    const progress = consoleProgress(stream);
    progress({ step: 'prices: reading', fraction: 0.5 });
    progress({ step: 'prices: storing', fraction: 1 });
    progress.finish();
    assert.deepEqual(out, [
      '\r[###############...............]  50 % prices: reading\x1b[K',
      '\n',
      '\r[##############################] 100 % prices: storing\x1b[K',
      '\n',
    ]);
  });
});

const INSTRUMENTS_CSV = `isin,Name,TICKER,ASSET_CLASS,INSTRUMENT_TYPE,CURRENCY,COUNTRY,PRICE,PRICE_DATE,MARKET_CAP,DIVIDEND_YIELD,TER,VENDOR_CODE
US0378331005,Apple Inc.,AAPL,EQUITY,STOCK,USD,US,213.49,2026-11-20,3.2e12,0.0045,,a1
DE0007164600,SAP SE,SAP,EQUITY,STOCK,EUR,DE,,,2.3e11,0.011,,a2
US0378331006,Bad Check Digit Inc.,BAD,EQUITY,STOCK,USD,US,10,2026-11-20,,,,a3
XX123,Bad Format,BAD,EQUITY,STOCK,USD,US,10,2026-11-20,,,,a4
IE00B4L5Y983,,IWDA,EQUITY,ETF,USD,IE,98.42,2026-11-20,,,0.002,a5
US0378331005,Apple Duplicate,AAPL,EQUITY,STOCK,USD,US,1,2026-11-20,,,,a6
FR0000120271,TotalEnergies SE,TTE,EQUITY,STOCK,EUR,FR,60.1,2026-11-20,1.4e11,2.1,,a7
GB0002374006,Diageo plc,DGE,equity,stock,gbp,gb,24.5,2026-11-20,6e10,0.03,,a8
IE00B4L5Y983,iShares Core MSCI World,IWDA,EQUITY,ETF,USD,IE,98.42,2026-11-20,,0,0.002,a9
`;
const GOOD_INSTRUMENTS = ['DE0007164600', 'GB0002374006', 'IE00B4L5Y983', 'US0378331005'];

async function writeFixtures(dir: string) {
  const instruments = join(dir, 'instruments.csv');
  await writeFile(instruments, INSTRUMENTS_CSV);
  // Prices as a vendor's Parquet file with text dates; rows 11–14 are bad.
  const prices = join(dir, 'prices.parquet');
  await duck(async (run) => {
    await run(`create table p as select * from (values
      ('US0378331005', '2026-11-16', 205.0), ('US0378331005', '2026-11-17', 207.5), ('US0378331005', '2026-11-18', 206.0), ('US0378331005', '2026-11-19', 210.25), ('US0378331005', '2026-11-20', 213.49),
      ('DE0007164600', '2026-11-16', 231.0), ('DE0007164600', '2026-11-17', 229.5), ('DE0007164600', '2026-11-18', 233.1), ('DE0007164600', '2026-11-19', 234.0), ('DE0007164600', '2026-11-20', 236.45),
      ('US0378331006', '2026-11-20', 10.0), ('DE0007164600', '2026-11-21x', 1.0), ('DE0007164600', '2026-11-20', 237.0), ('GB0002374006', '2026-11-20', -24.5)
    ) t("ISIN", "DATE", "CLOSE")`);
    await run(`copy p to '${prices}' (format parquet)`);
  });
  const factors = join(dir, 'factors.csv');
  await writeFile(
    factors,
    `ISIN,VALUE,GROWTH,MOMENTUM,STABILITY,FINANCIAL_HEALTH,PROFITABILITY,SIZE,DIVIDEND
US0378331005,0.031,0.08,0.12,4.1,3.2,0.45,28.8,0.0045
DE0007164600,0.028,,0.05,3.5,2.9,0.2,26.2,0.011
FR0000120271,0.09,0.01,0.02,3.0,2.5,0.15,25.7,0.05
IE00B4L5Y983,,,0.1,6.2,,,,0
GB0002374006,cheap,0.02,0.0,3.9,2.2,0.3,24.8,0.03
`,
  );
  const robo = join(dir, 'robo.csv');
  await writeFile(robo, 'ISIN\nIE00B4L5Y983\nUS0378331006\n');
  return { instruments, prices, factors, robo };
}

describe('ingest: vendor files to a reference file', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(testWorkDir(), 'ingest-'));
  });

  it('loads the good rows of CSV and Parquet files and reports the rejected ones with their rows and reasons', async () => {
    const f = await writeFixtures(dir);
    const events: string[] = [];
    const report = await ingestReferenceData(
      { instruments: f.instruments, prices: f.prices, factors: f.factors, universes: { robo: f.robo } },
      { referenceDir: join(dir, 'reference'), progress: (e) => events.push(e.step) },
    );
    assert.deepEqual([report.instruments, report.prices, report.factor_metrics], [4, 10, 3]);
    assert.deepEqual(report.universes, { GLOBAL: 4, ROBO: 1 });
    const [instruments, prices, factors, robo] = report.files;
    assert.deepEqual([instruments!.rows, instruments!.accepted, instruments!.rejected], [9, 4, 5]);
    assert.deepEqual(instruments!.rejects, [
      { row: 3, reason: 'ISIN US0378331006 has check digit 6, expected 5' },
      { row: 4, reason: "ISIN 'XX123' is not two letters, nine letters or digits and a digit" },
      { row: 5, reason: 'NAME is missing' },
      { row: 6, reason: 'duplicate ISIN US0378331005 (first at row 1)' },
      { row: 7, reason: 'DIVIDEND_YIELD 2.1 is out of range (a fraction: 0.021 is 2.1 %)' },
    ]);
    assert.deepEqual(instruments!.ignored_columns, ['VENDOR_CODE']);
    assert.deepEqual(
      prices!.rejects.map((r) => r.row),
      [11, 12, 13, 14],
    );
    assert.match(prices!.rejects[1]!.reason, /DATE '2026-11-21x' is not a date/);
    assert.match(prices!.rejects[2]!.reason, /duplicate ISIN and DATE \(first at row 10\)/);
    assert.deepEqual(
      factors!.rejects.map((r) => [r.row, r.reason]),
      [
        [3, 'ISIN FR0000120271 is not among the accepted instruments'],
        [5, "VALUE 'cheap' is not a number"],
      ],
    );
    assert.deepEqual(robo!.rejects, [{ row: 2, reason: 'ISIN US0378331006 has check digit 6, expected 5' }]);
    assert.ok(
      events.some((s) => s.startsWith('prices: checking')),
      events.join(' | '),
    );

    // The rejects file lists every refused row with its values as read.
    const rejectsCsv = await readFile(instruments!.rejects_file!, 'utf8');
    assert.equal(instruments!.rejects_file, `${f.instruments}.rejects.csv`);
    assert.match(rejectsCsv.split('\n')[0]!, /^ROW,REASON,ISIN,NAME,TICKER/);
    assert.equal(rejectsCsv.trim().split('\n').length, 6);
    assert.match(rejectsCsv, /^7,DIVIDEND_YIELD 2.1 is out of range .*,FR0000120271,TotalEnergies SE/m);
    assert.ok(existsSync(`${f.prices}.rejects.csv`));

    const published = await readPublished(
      report.reference_file,
      `select i.isin, i.name, i.asset_class, i.currency, i.country, i.price::varchar as price, i.price_date::varchar as price_date,
        (select count(*)::int from prices p where p.isin = i.isin) as closes, f.value, f.growth
      from instruments i left join factor_metrics f using (isin) order by isin`,
    );
    assert.deepEqual(
      published.map((r) => r.isin),
      GOOD_INSTRUMENTS,
    );
    const byIsin = Object.fromEntries(published.map((r) => [r.isin, r]));
    assert.deepEqual([byIsin.US0378331005!.price, byIsin.US0378331005!.closes], ['213.490000', 5]);
    // SAP came without a price: it gets its last close.
    assert.deepEqual([byIsin.DE0007164600!.price, byIsin.DE0007164600!.price_date], ['236.450000', '2026-11-20']);
    assert.deepEqual([byIsin.GB0002374006!.asset_class, byIsin.GB0002374006!.currency, byIsin.GB0002374006!.country], ['EQUITY', 'GBP', 'GB']);
    assert.deepEqual([byIsin.DE0007164600!.value, byIsin.DE0007164600!.growth], [0.028, null]);
    const meta = await readPublished(report.reference_file, 'select source from reference_meta');
    assert.equal(meta[0]!.source, 'ingest: instruments.csv, prices.parquet, factors.csv, ROBO=robo.csv');
  });

  it('reads Parquet instruments with typed columns and CSV prices', async () => {
    const instruments = join(dir, 'instruments.parquet');
    await duck(async (run) => {
      await run(`copy (select * from (values ('US0378331005', 'Apple Inc.', 213.49::decimal(18, 4), date '2026-11-20', 3.2e12::double),
          ('DE0007164601', 'SAP SE', 236.45, date '2026-11-20', 2.3e11)) t("ISIN", "NAME", "PRICE", "PRICE_DATE", "MARKET_CAP"))
        to '${instruments}' (format parquet)`);
    });
    const prices = join(dir, 'prices.csv');
    await writeFile(prices, 'ISIN,DATE,CLOSE\nUS0378331005,2026-11-19,210.25\nUS0378331005,19.11.2026,210\nUS0378331005,2026-11-20,213.49\n');
    const report = await ingestReferenceData({ instruments, prices }, { referenceDir: join(dir, 'reference'), rejectsDir: dir });
    assert.deepEqual([report.instruments, report.prices], [1, 2]);
    assert.deepEqual(report.files[0]!.rejects, [{ row: 2, reason: 'ISIN DE0007164601 has check digit 1, expected 0' }]);
    assert.deepEqual(report.files[1]!.rejects, [{ row: 2, reason: "DATE '19.11.2026' is not a date (YYYY-MM-DD)" }]);
    const [row] = await readPublished(report.reference_file, `select price::varchar as price, price_date::varchar as d, market_cap from instruments`);
    assert.deepEqual(row, { price: '213.490000', d: '2026-11-20', market_cap: 3.2e12 });
  });

  it('publishes nothing when the instruments file is unusable or has no good row', async () => {
    const referenceDir = join(dir, 'reference');
    const noName = join(dir, 'no-name.csv');
    await writeFile(noName, 'ISIN,TICKER\nUS0378331005,AAPL\n');
    await assert.rejects(ingestReferenceData({ instruments: noName }, { referenceDir }), /no NAME column/);
    const allBad = join(dir, 'all-bad.csv');
    await writeFile(allBad, 'ISIN,NAME\nUS0378331006,Bad\n');
    await assert.rejects(ingestReferenceData({ instruments: allBad }, { referenceDir }), /No row of .*all-bad.csv was accepted/);
    await assert.rejects(ingestReferenceData({ instruments: join(dir, 'missing.csv') }, { referenceDir }), /no such file/);
    // A CSV line with more fields than the header fails the file, naming the line when DuckDB reads it.
    const ragged = join(dir, 'ragged.csv');
    await writeFile(ragged, `ISIN,NAME\n${'US0378331005,Apple Inc.\n'.repeat(30_000)}DE0007164600,SAP,extra\n`);
    await assert.rejects(
      ingestReferenceData({ instruments: ragged }, { referenceDir }),
      /ragged.csv cannot be read: .*CSV Error on Line: 30002\nOriginal Line: DE0007164600,SAP,extra/,
    );
    await writeFile(ragged, 'ISIN,NAME\nUS0378331005,"Apple, Inc."\nDE0007164600,SAP,extra\n');
    await assert.rejects(ingestReferenceData({ instruments: ragged }, { referenceDir }), /more or fewer fields than the header/);
    await assert.rejects(ingestReferenceData({ instruments: noName, universes: { 'bad name': noName } }, { referenceDir }), /not a code like ROBO/);
    // A byte that is not UTF-8 (Latin-1 ü) fails the file naming its line, whether the sniffer samples it or not; never read as U+FFFD.
    const latin1 = join(dir, 'latin1.csv');
    const mueller = Buffer.concat([Buffer.from('DE0007164600,M'), Buffer.from([0xfc]), Buffer.from('ller AG\n')]);
    await writeFile(latin1, Buffer.concat([Buffer.from('ISIN,NAME\nUS0378331005,Apple Inc.\n'), mueller]));
    await assert.rejects(ingestReferenceData({ instruments: latin1 }, { referenceDir }), /latin1.csv cannot be read: line 3 is not UTF-8/);
    await writeFile(latin1, Buffer.concat([Buffer.from(`ISIN,NAME\n${'US0378331005,Apple Inc.\n'.repeat(30_000)}`), mueller]));
    await assert.rejects(ingestReferenceData({ instruments: latin1 }, { referenceDir }), /latin1.csv cannot be read: line 30002 is not UTF-8/);
    assert.deepEqual(
      (await readdir(referenceDir).catch(() => [])).filter((n) => n.endsWith('.duckdb')),
      [],
    );
  });

  it('keeps the newest reference files and deletes the older ones', async () => {
    const referenceDir = join(dir, 'reference');
    const f = join(dir, 'i.csv');
    await writeFile(f, 'ISIN,NAME\nUS0378331005,Apple Inc.\n');
    const published: string[] = [];
    for (let k = 0; k < 4; k++) {
      published.push((await ingestReferenceData({ instruments: f }, { referenceDir, keep: 10 })).reference_file);
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.deepEqual(await pruneReferenceFiles(referenceDir, 2), published.slice(0, 2));
    assert.deepEqual(
      (await readdir(referenceDir)).sort(),
      published.slice(2).map((p) => p.slice(referenceDir.length + 1)),
    );
  });

  it('a running data service switches to a newly ingested file without a restart, answering throughout', async () => {
    const referenceDir = join(dir, 'reference');
    const f = await writeFixtures(dir);
    const first = await ingestReferenceData({ instruments: f.instruments }, { referenceDir });
    const platform = await startTestPlatform({ REFERENCE_DIR: referenceDir, REFERENCE_RELOAD_MS: '100' });
    // The service runs in this process: the reference files it has attached are among its open files.
    const attached = () => [
      ...new Set(
        readdirSync('/proc/self/fd')
          .map((fd) => {
            try {
              return readlinkSync(`/proc/self/fd/${fd}`);
            } catch {
              return '';
            }
          })
          .filter((p) => p.startsWith(referenceDir) && p.endsWith('.duckdb')),
      ),
    ];
    const statuses: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        statuses.push((await fetch(`${platform.dataUrl}/readyz`)).status);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      assert.deepEqual(attached(), [first.reference_file]);
      const second = await ingestReferenceData(
        { instruments: f.instruments, prices: f.prices, factors: f.factors, universes: { ROBO: f.robo } },
        { referenceDir },
      );
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && attached().join() !== second.reference_file) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(attached(), [second.reference_file], 'the new file attached, the old one let go');
      await new Promise((r) => setTimeout(r, 200));
      polling = false;
      await poller;
      assert.ok(statuses.length > 10 && statuses.every((s) => s === 200), `readyz answers: ${statuses.join(',')}`);
      const counts = await readPublished(
        second.reference_file,
        `select (select count(*) from instruments)::int as instruments, (select count(*) from prices)::int as prices,
        (select count(*) from universes where universe_name = 'ROBO')::int as robo`,
      );
      assert.deepEqual(counts[0], { instruments: second.instruments, prices: second.prices, robo: 1 });
      assert.notDeepEqual([second.prices], [first.prices]);
    } finally {
      polling = false;
      await poller;
      await platform.stop();
    }
  });
});
