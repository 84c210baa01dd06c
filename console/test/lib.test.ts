import assert from 'node:assert/strict';
import { diffDocs, isChangedPath, readablePath } from '../src/lib/diff.ts';
import { fanChart, niceStep } from '../src/lib/fan-chart.ts';
import { jsonLines } from '../src/lib/json-lines.ts';
import { entityPath } from '../src/lib/collections.ts';
import { markPosition, queryErrorPosition } from '../src/lib/query-error.ts';
import { href, parseHash } from '../src/lib/route.ts';
import { renewalDelayMs, tokenClaims } from '../src/lib/tokens.ts';
import { valueHoldings } from '../src/lib/valuation.ts';

describe('console: the differences between two versions', () => {
  it('names each changed, added and removed field by its pointer, in document order', () => {
    const before = { name: 'Alpha', config: { manager: 'USER_MANAGED', manager_settings: { active: true, tags: ['a'] } }, gone: 1 };
    const after = { name: 'Beta', config: { manager: 'USER_MANAGED', manager_settings: { active: false, tags: ['a', 'b'] } }, portfolio: { $EUR: 5 } };
    assert.deepEqual(diffDocs(before, after), [
      { path: '/name', kind: 'changed', before: 'Alpha', after: 'Beta' },
      { path: '/config/manager_settings/active', kind: 'changed', before: true, after: false },
      { path: '/config/manager_settings/tags/1', kind: 'added', after: 'b' },
      { path: '/gone', kind: 'removed', before: 1 },
      { path: '/portfolio', kind: 'added', after: { $EUR: 5 } },
    ]);
  });

  it('finds nothing between equal documents, and a null that became an object as one change', () => {
    assert.deepEqual(diffDocs({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), []);
    assert.deepEqual(diffDocs({ account: null }, { account: { iban: 'X' } }), [{ path: '/account', kind: 'changed', before: null, after: { iban: 'X' } }]);
  });

  it('escapes keys with / and ~ and reads them back for people', () => {
    const [change] = diffDocs({ 'a/b~c': 1 }, { 'a/b~c': 2 });
    assert.equal(change!.path, '/a~1b~0c');
    assert.equal(readablePath(change!.path), 'a/b~c');
    assert.equal(readablePath('/config/manager_settings/tags/0'), 'config.manager_settings.tags[0]');
  });

  it('highlights the lines inside a changed object and no line beside it', () => {
    const changed = new Set(['/portfolio']);
    assert.equal(isChangedPath('/portfolio/$EUR', changed), true);
    assert.equal(isChangedPath('/portfolio', changed), true);
    assert.equal(isChangedPath('/portfolios', changed), false);
    assert.equal(isChangedPath('/name', changed), false);
  });

  it('prints JSON as JSON.stringify does, each line knowing its pointer', () => {
    const doc = { id: 'P1', config: { manager: 'X', tags: [] }, portfolio: { $EUR: 5, 'a/b': [1, 2] }, empty: {} };
    const lines = jsonLines(doc);
    assert.equal(lines.map((l) => '  '.repeat(l.depth) + l.text).join('\n'), JSON.stringify(doc, null, 2));
    assert.equal(lines.find((l) => l.text.startsWith('"$EUR"'))!.path, '/portfolio/$EUR');
    assert.equal(lines.find((l) => l.text === '2')!.path, '/portfolio/a~1b/1');
  });
});

describe('console: the position of a query error', () => {
  it('marks the character at the position the problem names', () => {
    assert.deepEqual(markPosition("name eqq 'x'", 5), { before: 'name ', at: 'e', after: "qq 'x'", atEnd: false });
  });

  it('marks the end of the query when the position is its length, and keeps positions inside it', () => {
    assert.deepEqual(markPosition('name eq', 7), { before: 'name eq', at: '', after: '', atEnd: true });
    assert.deepEqual(markPosition('ab', -3), { before: '', at: 'a', after: 'b', atEnd: false });
  });

  it('reads the position of invalid_query problems only', () => {
    assert.equal(queryErrorPosition({ code: 'invalid_query', position: 12 }), 12);
    assert.equal(queryErrorPosition({ code: 'invalid_parameter', position: 12 }), undefined);
    assert.equal(queryErrorPosition({ code: 'invalid_query', position: '12' }), undefined);
    assert.equal(queryErrorPosition(undefined), undefined);
  });
});

describe('console: the fan chart', () => {
  const input = {
    value: {
      '0.95': { '2026-01-01': 1000, '2027-01-01': 1500, '2028-01-01': 2200 },
      '0.05': { '2026-01-01': 1000, '2027-01-01': 1100, '2028-01-01': 1150 },
      '0.5': { '2026-01-01': 1000, '2027-01-01': 1300, '2028-01-01': 1600 },
      '0.25': { '2026-01-01': 1000, '2027-01-01': 1200, '2028-01-01': 1400 },
      '0.75': { '2026-01-01': 1000, '2027-01-01': 1400, '2028-01-01': 1800 },
    },
    deposits: { '2026-01-01': 1000, '2027-01-01': 1100, '2028-01-01': 1200 },
  };
  const size = { width: 400, height: 220, left: 50, right: 10, top: 10, bottom: 10 };

  it('pairs the quantiles from the outside in and draws the middle one as the median', () => {
    const chart = fanChart(input, size);
    assert.deepEqual(
      chart.bands.map((b) => [b.lower, b.upper]),
      [
        ['0.05', '0.95'],
        ['0.25', '0.75'],
      ],
    );
    assert.equal(chart.median?.quantile, '0.5');
    assert.deepEqual(chart.dates, ['2026-01-01', '2027-01-01', '2028-01-01']);
  });

  it('places the first date at the left edge, the last at the right, and the top tick above the highest value', () => {
    const chart = fanChart(input, size);
    // Deposits: 1000 → 1200, on a scale from 0 to 2500 (steps of 500) 200 px high.
    assert.equal(chart.deposits, 'M50.0,130.0 L220.0,122.0 L390.0,114.0');
    assert.equal(chart.yTicks[0]!.label, '0');
    assert.equal(chart.yTicks[chart.yTicks.length - 1]!.label, '2.5K');
    assert.deepEqual(
      chart.xTicks.map((t) => t.label),
      ['2026', '2027', '2028'],
    );
    // The outer band runs along the 95 % values and back along the 5 % ones, closed.
    assert.match(chart.bands[0]!.d, /^M50\.0,130\.0 L220\.0,90\.0 L390\.0,34\.0 L390\.0,118\.0 L220\.0,122\.0 L50\.0,130\.0 Z$/);
  });

  it('rounds tick steps to 1, 2 or 5 times a power of ten', () => {
    assert.deepEqual([niceStep(2500, 5), niceStep(1234, 5), niceStep(7, 5), niceStep(0, 5)], [500, 500, 2, 1]);
  });
});

describe('console: ids, routes, tokens and valuations', () => {
  const ULID = '01HZC48CNR9YNY5M4C8F5S2HT9';

  it('places each id in the interface by its letter; a transaction needs its portfolio', () => {
    assert.equal(entityPath(`P${ULID}`), `/portfolios/P${ULID}`);
    assert.equal(entityPath(`N${ULID}`), `/suitability-profiler/profiles/N${ULID}`);
    assert.equal(entityPath(`O${ULID}`), `/optimizations/O${ULID}`);
    assert.equal(entityPath(`T${ULID}`), undefined);
    assert.equal(entityPath(`T${ULID}`, `P${ULID}`), `/portfolios/P${ULID}/transactions/T${ULID}`);
    assert.equal(entityPath('P1/../../users'), undefined);
    assert.equal(entityPath(`Z${ULID}`), undefined);
  });

  it('reads and writes routes in the fragment', () => {
    const link = href('search', undefined, { c: 'portfolios', q: "name eq 'A & B'", o: undefined });
    assert.equal(link, '#/search?c=portfolios&q=name+eq+%27A+%26+B%27');
    const route = parseHash(link);
    assert.equal(route.page, 'search');
    assert.equal(route.params.get('q'), "name eq 'A & B'");
    assert.deepEqual({ ...parseHash(`#/entity/T${ULID}?parent=P1`), params: undefined }, { page: 'entity', id: `T${ULID}`, params: undefined });
    assert.equal(parseHash('').page, 'search');
  });

  it('renews a token a fifth of its lifetime before it expires, at most a minute before, not sooner than a second', () => {
    assert.equal(renewalDelayMs(300), 240_000);
    assert.equal(renewalDelayMs(3600), 3_540_000);
    assert.equal(renewalDelayMs(30), 24_000);
    assert.equal(renewalDelayMs(1), 1000);
  });

  it("reads the tenant of an access token's claims, and nothing of a token that is not a JWT", () => {
    const payload = Buffer.from(JSON.stringify({ sub: 'A1', tenant_id: 'bank-ü', kind: 'machine' })).toString('base64url');
    assert.equal(tokenClaims(`eyJhbGciOiJFUzI1NiJ9.${payload}.sig`).tenant_id, 'bank-ü');
    assert.deepEqual(tokenClaims('not a token'), {});
    assert.deepEqual(tokenClaims('a.%%%.c'), {});
  });

  it('values instruments at their price and cash at face value, totals per currency, unknown prices left out', () => {
    const { rows, totals } = valueHoldings(
      { $EUR: 100.5, IE00B4L5Y983: 3, US0378331005: 2, XS0000000000: 7 },
      { IE00B4L5Y983: { name: 'World', price: 98.5, currency: 'EUR' }, US0378331005: { name: 'Apple', price: 200, currency: 'USD' } },
    );
    assert.deepEqual(totals, { EUR: 100.5 + 295.5, USD: 400 });
    assert.deepEqual(
      rows.map((r) => [r.key, r.value]),
      [
        ['US0378331005', 400],
        ['IE00B4L5Y983', 295.5],
        ['XS0000000000', undefined],
        ['$EUR', 100.5],
      ],
    );
  });
});
