import assert from 'node:assert/strict';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { SqlParams as Params } from '../src/store/params.ts';
import { scopeSql } from '../src/search/scope.ts';
import { applySchema } from '../src/store/schema.ts';
import { FACTORS, GROUP_SPLITS, starsColumn, type GroupSplitType, type XrayFactor } from '../src/xray/factors.ts';
import { starsSql } from '../src/xray/stars.ts';

type Metric = (typeof FACTORS)[number]['metric'];
type Instrument = {
  isin: string;
  /** Undefined: the reference data does not know the instrument. */
  groups?: { region: string | null; sector: string | null; size_label: string | null };
  /** Undefined: no factor_metrics row. */
  metrics?: Partial<Record<Metric, number | null>>;
};

/**
 * The stars as stars.ts's comment defines them, by counting, without SQL: with n members of the
 * normalization universe in the instrument's group holding the metric, b below its value and e
 * equal to it, min(5, 1 + floor(5 · (b + e/2) / n)); a null or NaN metric, or n = 0, is null.
 */
function referenceStars(instruments: Instrument[], norm: Set<string>, answer: Set<string>, split: GroupSplitType | undefined, factors: readonly XrayFactor[]) {
  const byIsin = new Map(instruments.map((i) => [i.isin, i]));
  const groupOf = (isin: string) => JSON.stringify((split ? GROUP_SPLITS[split] : []).map((c) => byIsin.get(isin)?.groups?.[c] ?? null));
  const metricOf = (isin: string, metric: Metric) => {
    const v = byIsin.get(isin)?.metrics?.[metric];
    return v === undefined || v === null || Number.isNaN(v) ? null : v;
  };
  const result = new Map<string, (number | null)[]>();
  for (const isin of answer) {
    result.set(
      isin,
      FACTORS.filter((f) => factors.includes(f.field)).map(({ metric }) => {
        const v = metricOf(isin, metric);
        if (v === null) return null;
        const members = [...norm]
          .filter((m) => groupOf(m) === groupOf(isin))
          .map((m) => metricOf(m, metric))
          .filter((m) => m !== null);
        const n = members.length;
        if (n === 0) return null;
        const b = members.filter((m) => m < v).length;
        const e = members.filter((m) => m === v).length;
        return Math.min(5, 1 + Math.floor((5 * (b + e / 2)) / n));
      }),
    );
  }
  return result;
}

/** A seeded generator, so that a failure can be replayed. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  return {
    next,
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}

const SPLITS = [undefined, ...Object.keys(GROUP_SPLITS)] as (GroupSplitType | undefined)[];
const literal = (v: string | number | null) => (v === null ? 'null' : typeof v === 'number' ? (Number.isNaN(v) ? "'nan'::double" : `${v}::double`) : `'${v}'`);

describe('X-Ray stars SQL against the formula counted in TypeScript', () => {
  let instance: DuckDBInstance;
  let conn: DuckDBConnection;

  before(async () => {
    instance = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
    conn = await instance.connect();
    await applySchema(conn, 'reference');
    // Plain tables (no keys): a relation may name an instrument twice.
    await conn.run('create table norm_rel (isin varchar); create table answer_rel (isin varchar)');
  });
  after(() => {
    conn.closeSync();
    instance.closeSync();
  });

  /** Writes the instruments and both relations, runs starsSql and reads stars by ISIN. */
  async function sqlStars(
    instruments: Instrument[],
    norm: string[],
    answer: string[],
    split: GroupSplitType | undefined,
    factors: readonly XrayFactor[],
    same: boolean,
  ) {
    await conn.run('delete from instruments; delete from factor_metrics; delete from norm_rel; delete from answer_rel');
    const known = instruments.filter((i) => i.groups);
    if (known.length) {
      await conn.run(
        `insert into instruments (isin, name, region, sector, size_label) values ${known
          .map((i) => `(${[i.isin, i.isin, i.groups!.region, i.groups!.sector, i.groups!.size_label].map(literal).join(', ')})`)
          .join(', ')}`,
      );
    }
    const measured = instruments.filter((i) => i.metrics);
    if (measured.length) {
      await conn.run(
        `insert into factor_metrics (isin, ${FACTORS.map((f) => f.metric).join(', ')}) values ${measured
          .map((i) => `(${[i.isin, ...FACTORS.map((f) => i.metrics![f.metric] ?? null)].map(literal).join(', ')})`)
          .join(', ')}`,
      );
    }
    if (norm.length) await conn.run(`insert into norm_rel values ${norm.map((isin) => `('${isin}')`).join(', ')}`);
    if (answer.length) await conn.run(`insert into answer_rel values ${answer.map((isin) => `('${isin}')`).join(', ')}`);
    const sql = same
      ? `with answer as (select isin from answer_rel) ${starsSql('main', split, 'answer', 'answer', factors)}`
      : `with norm as (select isin from norm_rel), answer as (select isin from answer_rel) ${starsSql('main', split, 'norm', 'answer', factors)}`;
    const reader = await conn.runAndReadAll(sql);
    const columns = FACTORS.filter((f) => factors.includes(f.field)).map((f) => starsColumn(f.field));
    assert.deepEqual(reader.columnNames(), ['isin', ...columns]);
    const rows = reader.getRows();
    const result = new Map(rows.map(([isin, ...stars]) => [String(isin), stars.map((s) => (s === null ? null : Number(s)))]));
    assert.equal(result.size, rows.length, 'every instrument answered once');
    return result;
  }

  it('gives the same stars on 400 random universes: ties, nulls, NaN, unknown instruments, answer-only and norm-only members, every split', async () => {
    const rnd = random(20261122);
    const values = [-1.5, 0, 0, 1, 1, 2, 3, 3, 3, 4, 7.25, 10];
    for (let round = 0; round < 400; round++) {
      const size = Math.floor(rnd.next() * 30);
      // Few distinct values per round, so that ties are common.
      const palette = values.filter(() => rnd.chance(0.5));
      const instruments: Instrument[] = Array.from({ length: size }, (_, k) => {
        const isin = `XT${String(round).padStart(4, '0')}${String(k).padStart(6, '0')}`;
        const metric = () => (rnd.chance(0.15) ? null : rnd.chance(0.04) ? Number.NaN : palette.length ? rnd.pick(palette) : rnd.next());
        return {
          isin,
          groups: rnd.chance(0.1)
            ? undefined
            : { region: rnd.pick(['EU', 'US', null]), sector: rnd.pick(['TECH', 'FIN', 'FIN', null]), size_label: rnd.pick(['LARGE', 'SMALL', null]) },
          metrics: rnd.chance(0.1) ? undefined : Object.fromEntries(FACTORS.filter(() => rnd.chance(0.9)).map((f) => [f.metric, metric()])),
        };
      });
      const isins = instruments.map((i) => i.isin);
      const same = rnd.chance(0.25);
      const answer = isins.filter(() => rnd.chance(0.6));
      const norm = same ? answer : isins.filter(() => rnd.chance(0.6));
      // Sometimes an instrument twice in a relation.
      if (answer.length && rnd.chance(0.2)) answer.push(rnd.pick(answer));
      if (!same && norm.length && rnd.chance(0.2)) norm.push(rnd.pick(norm));
      const split = rnd.pick(SPLITS);
      const factors = rnd.chance(0.3) ? FACTORS.map((f) => f.field) : FACTORS.map((f) => f.field).filter(() => rnd.chance(0.4));
      const got = await sqlStars(instruments, norm, answer, split, factors, same);
      const expected = referenceStars(instruments, new Set(same ? answer : norm), new Set(answer), split, factors);
      assert.deepEqual(got, expected, `round ${round}: split ${split ?? 'none'}, factors ${factors.join(',')}, ${same ? 'one relation' : 'two relations'}`);
    }
  });

  it('computes the factors asked for only, and answers instruments without any metric', async () => {
    const instruments: Instrument[] = [
      { isin: 'XT0000000001', groups: { region: 'EU', sector: null, size_label: null }, metrics: { value: 1, growth: 2 } },
      { isin: 'XT0000000002', groups: { region: 'EU', sector: null, size_label: null }, metrics: { value: 2, growth: 2 } },
      { isin: 'XT0000000003' },
    ];
    const all = instruments.map((i) => i.isin);
    const got = await sqlStars(instruments, all, all, 'REGION', ['GROWTH_STARS', 'VALUE_STARS'], false);
    // VALUE 1, 2 → 1 + ⌊5·0.5/2⌋ = 2 and 1 + ⌊5·1.5/2⌋ = 4; GROWTH tied → 1 + ⌊5·1/2⌋ = 3. Columns in FACTORS order.
    assert.deepEqual(
      got,
      new Map([
        ['XT0000000001', [2, 3]],
        ['XT0000000002', [4, 3]],
        ['XT0000000003', [null, null]],
      ]),
    );
  });
});

describe('search scope: the stars of the factors named only', () => {
  const scope = (stars: XrayFactor[]) => scopeSql('ref_1', 'tenant', { split: 'SECTOR' }, new Params(), stars);

  it('computes no stars when no factor is named', () => {
    const { with: ctes, from } = scope([]);
    assert.doesNotMatch(ctes, /stars|factor_metrics|over \(/);
    assert.doesNotMatch(from, /stars/);
  });

  it('computes the named factors and no other', () => {
    const { with: ctes, from } = scope(['GROWTH_STARS']);
    assert.match(ctes, /as growth_stars/);
    assert.equal(ctes.match(/_stars\b/g)?.length, 1);
    assert.match(from, /left join stars s on s\.isin = a\.isin/);
  });
});
