import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PROTOTYPE_NAMES, prototypeSnapshot } from '@platform/test-support/prototype-names';
import { parseCustomReferenceCsv } from '../src/custom/csv.ts';
import { collectValues, overrideProblem } from '../src/custom/values.ts';
import { InvalidValue, UnknownValue } from '../src/domain/errors.ts';
import { fieldOfKey, resolveFields } from '../src/domain/reference-fields.ts';
import { compileFilter } from '../src/search/compile.ts';
import type { FieldKind } from '../src/search/fields.ts';
import { parseFilter } from '../src/search/parser.ts';
import { planSimulation, type FuturePerformanceRequest } from '../src/simulation/request.ts';
import { SqlParams } from '../src/store/params.ts';
import { isFactor } from '../src/xray/factors.ts';

const CUSTOM_KEY = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const name = fc.constantFrom(...PROTOTYPE_NAMES);

/** The pure lookups of the data service by a client's name, with the names every plain object answers for. */
describe('names of Object.prototype in the data service’s catalogues (pure)', () => {
  it('reference fields, X-Ray factors and overridable keys: none of them', () => {
    for (const n of PROTOTYPE_NAMES) {
      assert.throws(
        () => resolveFields(['NAME', n], ['body', 'fields']),
        (e: unknown) => e instanceof UnknownValue && JSON.stringify(e.loc) === JSON.stringify(['body', 'fields', 1]) && e.msg.includes(`'${n}'`),
      );
      assert.equal(fieldOfKey(n), undefined, n);
      assert.equal(overrideProblem(n, 'text'), undefined, n);
      assert.equal(isFactor(n), false, n);
    }
  });

  it('a search filter naming one: UnknownValue at the filter, naming the position of the field', () => {
    fc.assert(
      fc.property(name, fc.constantFrom<FieldKind>('reference', 'xray', 'derived'), fc.boolean(), (n, kind, lead) => {
        const known = { reference: '$PRICE > 0', xray: '$VALUE_STARS >= 1', derived: '$ANALYST_UPWARD_POTENTIAL > 0' }[kind];
        const text = `${lead ? `${known} & ` : ''}$${n} >= 1`;
        const loc = ['body', 'query', kind];
        assert.throws(
          () => compileFilter(parseFilter(text, loc), kind, new SqlParams(), loc, text),
          (e: unknown) =>
            e instanceof UnknownValue && JSON.stringify(e.loc) === JSON.stringify(loc) && e.msg.includes(`'${n}' at position ${text.indexOf(`$${n}`)}`),
          text,
        );
      }),
    );
  });

  it('a CSV header: a key the contract allows is taken as it is, another is refused at its cell', () => {
    for (const n of PROTOTYPE_NAMES) {
      const text = `instrument_id,${n}\nUS0378331005,1\n`;
      if (CUSTOM_KEY.test(n)) {
        const parsed = parseCustomReferenceCsv(text);
        assert.deepEqual(parsed.keys, [n]);
        assert.deepEqual(parsed.rows[0]!.values, [[n, 1]]);
      } else {
        assert.throws(
          () => parseCustomReferenceCsv(text),
          (e: unknown) => e instanceof InvalidValue && JSON.stringify(e.loc) === JSON.stringify(['body', 1, n]),
        );
      }
    }
  });

  it('collected custom values keep every key, and nothing reaches Object.prototype', () => {
    const before = prototypeSnapshot();
    const values = collectValues(
      [{ isin: 'US0378331005', values: PROTOTYPE_NAMES.map((n, i): [string, number] => [n, i]) }],
      (e) => e,
      (i, key) => ['body', i, key],
    );
    assert.deepEqual(
      [...values.get('US0378331005')!.entries()],
      PROTOTYPE_NAMES.map((n, i) => [n, i]),
    );
    assert.deepEqual(prototypeSnapshot(), before);
  });

  it('a simulation whose asset class has no mapping or no expected returns is refused at that class, whatever its name', () => {
    // The contract's pattern keeps these names out of a request; the planner does not rely on it.
    const base = { start_date: '2024-01-01', end_date: '2025-01-01', scenarios: 10, seed: 1 };
    for (const n of PROTOTYPE_NAMES) {
      const historical = {
        ...base,
        asset_classes: { [n]: [0, 1] },
        use_expected_returns: false,
        asset_class_mapping: {},
      } as unknown as FuturePerformanceRequest;
      assert.throws(
        () => planSimulation(historical, { maxCells: Infinity }, () => 0),
        (e: unknown) => e instanceof InvalidValue && JSON.stringify(e.loc) === JSON.stringify(['body', 'asset_class_mapping', n]),
        n,
      );
      const expected = { ...base, asset_classes: { [n]: [0, 1] }, asset_class_st_mean_and_stdev: {} } as unknown as FuturePerformanceRequest;
      assert.throws(
        () => planSimulation(expected, { maxCells: Infinity }, () => 0),
        (e: unknown) => e instanceof InvalidValue && JSON.stringify(e.loc) === JSON.stringify(['body', 'asset_class_st_mean_and_stdev', n]),
        n,
      );
    }
  });
});
