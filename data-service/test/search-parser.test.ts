import assert from 'node:assert/strict';
import { InvalidExpression, UnknownValue } from '../src/domain/errors.ts';
import type { Filter } from '../src/search/ast.ts';
import { compileFilter, filterFields } from '../src/search/compile.ts';
import { SqlParams as Params } from '../src/store/params.ts';
import { parseFilter } from '../src/search/parser.ts';

const LOC = ['body', 'query', 'xray'];
const parse = (text: string) => parseFilter(text, LOC);

/** A compact rendering of the AST: comparisons as `FIELD op value`, groups in brackets. */
function show(f: Filter): string {
  if (f.type !== 'compare') return `${f.type}[${f.items.map(show).join(', ')}]`;
  return `${f.field} ${f.op} ${f.value.kind === 'number' ? f.value.text : `'${f.value.value}'`}`;
}

function failsAt(text: string, position: number, message?: RegExp): InvalidExpression {
  let caught: unknown;
  try {
    parse(text);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof InvalidExpression, `${text}: ${String(caught)}`);
  assert.equal(caught.position, position, `${text}: ${caught.message}`);
  assert.deepEqual(caught.loc, LOC);
  if (message) assert.match(caught.message, message);
  return caught;
}

describe('smart-search filter parser', () => {
  it('parses a comparison with every operator', () => {
    for (const op of ['>=', '<=', '>', '<', '==', '!=']) {
      const f = parse(`$VALUE_STARS ${op} 4`);
      assert.deepEqual(f, { type: 'compare', field: 'VALUE_STARS', fieldAt: 0, op, value: { kind: 'number', text: '4', at: 14 + op.length } });
    }
  });

  it('takes the longest operator and needs no spaces', () => {
    assert.equal(show(parse('$A>=1&$B<=2|$C!=3&$D==4&$E>5&$F<6')), 'or[and[A >= 1, B <= 2], and[C != 3, D == 4, E > 5, F < 6]]');
  });

  it('binds & tighter than |', () => {
    assert.equal(show(parse('$A > 1 | $B > 2 & $C > 3')), 'or[A > 1, and[B > 2, C > 3]]');
    assert.equal(show(parse('$A > 1 & $B > 2 | $C > 3')), 'or[and[A > 1, B > 2], C > 3]');
  });

  it('lets parentheses override precedence, nested and redundant', () => {
    assert.equal(show(parse('($A > 1 | $B > 2) & $C > 3')), 'and[or[A > 1, B > 2], C > 3]');
    assert.equal(show(parse('$A > 1 & ($B > 2 | ($C > 3 & $D > 4))')), 'and[A > 1, or[B > 2, and[C > 3, D > 4]]]');
    assert.equal(show(parse('((($A > 1)))')), 'A > 1');
  });

  it('reads numbers in every usual notation and quoted strings with doubled quotes', () => {
    const values = ['0', '-1', '2.5', '-0.25', '.5', '3.', '1e3', '-1.5E-2'].map((n) => {
      const f = parse(`$X >= ${n}`);
      return f.type === 'compare' && f.value.kind === 'number' ? Number(f.value.text) : NaN;
    });
    assert.deepEqual(values, [0, -1, 2.5, -0.25, 0.5, 3, 1000, -0.015]);
    assert.equal(show(parse("$SECTOR == 'Consumer ''staples'''")), "SECTOR == 'Consumer 'staples''");
    assert.equal(show(parse("$NAME != ''")), "NAME != ''");
  });

  it('allows whitespace of every kind around terms', () => {
    assert.equal(show(parse(' \t( $A >= 1\n&\r\n$B < 2 ) ')), 'and[A >= 1, B < 2]');
  });

  it('records the position of every field and value', () => {
    const f = parse('$VALUE_STARS >= 4 & $STABILITY_STARS >= 3');
    assert.equal(f.type, 'and');
    const [first, second] = (f as { items: Filter[] }).items as [Extract<Filter, { type: 'compare' }>, Extract<Filter, { type: 'compare' }>];
    assert.deepEqual([first.fieldAt, first.value.at, second.fieldAt, second.value.at], [0, 16, 20, 40]);
  });

  describe('errors name the 0-based position', () => {
    it('a missing value (the contract example)', () => {
      const e = failsAt('$VALUE_STARS >= & $STABILITY_STARS >= 3', 16, /expected a number or a quoted string, found "&"/);
      assert.equal(e.source, '$VALUE_STARS >= & $STABILITY_STARS >= 3');
    });
    it('an empty or blank filter', () => {
      failsAt('', 0, /found end of filter/);
      failsAt('   ', 3, /expected "\(" or a field/);
    });
    it('a field without $', () => failsAt('VALUE_STARS >= 4', 0, /a field \(\$NAME\)/));
    it('a single = and other unknown operators', () => {
      failsAt('$A = 3', 3, /expected an operator/);
      failsAt('$A => 3', 3, /expected an operator/);
      failsAt('$A <> 3', 4, /expected a number/);
    });
    it('a dangling & or |', () => {
      failsAt('$A > 1 &', 8, /found end of filter/);
      failsAt('$A > 1 | | $B > 2', 9, /found "\|"/);
    });
    it('words for operators', () => failsAt('$A > 1 and $B > 2', 7, /expected "&", "\|" or end of filter, found "a"/));
    it('unbalanced parentheses', () => {
      failsAt('($A > 1', 7, /"\)"/);
      failsAt('$A > 1)', 6, /found "\)"/);
      failsAt('()', 1, /a field/);
    });
    it('a malformed number or an unclosed string', () => {
      failsAt('$A > 1.2.3', 5);
      failsAt('$A > 12abc', 5);
      failsAt("$A == 'abc", 6);
      failsAt('$A > "x"', 5);
    });
    it('a bare $', () => failsAt('$ > 1', 0));
  });
});

describe('smart-search filter compiler', () => {
  const compile = (text: string, kind: 'reference' | 'xray' | 'derived' = 'xray') => {
    const params = new Params();
    return { sql: compileFilter(parseFilter(text, LOC), kind, params, LOC, text), values: params.values };
  };

  it('compiles to SQL with every value a typed bound parameter', () => {
    const { sql, values } = compile('($VALUE_STARS >= 4 | $GROWTH_STARS == 5) & $SIZE_STARS != 1');
    assert.equal(sql, '(((s.value_stars >= $1::double) or (s.growth_stars = $2::double)) and (s.size_stars != $3::double))');
    assert.deepEqual(values, [4, 5, 1]);
  });

  it('lists the fields a filter compares, each once', () => {
    assert.deepEqual(filterFields(parse('($VALUE_STARS >= 4 | $GROWTH_STARS == 5) & $VALUE_STARS != 1')), ['VALUE_STARS', 'GROWTH_STARS']);
    assert.deepEqual(filterFields(parse('$SIZE_STARS < 2')), ['SIZE_STARS']);
  });

  it('never puts filter text into SQL', () => {
    const text = "$NAME == 'x''; drop table universes; --' | $SECTOR < 'a'";
    const { sql, values } = compile(text, 'reference');
    assert.equal(sql, '((i.name = $1::varchar) or (i.sector < $2::varchar))');
    assert.deepEqual(values, ["x'; drop table universes; --", 'a']);
  });

  it('reads reference, derived and date fields', () => {
    assert.deepEqual(compile("$DIVIDEND_YIELD >= 0.02 & $PRICE_DATE > '2024-12-31'", 'reference'), {
      sql: '((i.dividend_yield >= $1::double) and (i.price_date > $2::date))',
      values: [0.02, '2024-12-31'],
    });
    assert.match(compile('$ANALYST_UPWARD_POTENTIAL > 0.1', 'derived').sql, /analyst_target_price.*nullif\(i\.price::double, 0\) - 1\) > \$1::double/);
  });

  it('refuses a field of another kind, naming it and the allowed ones', () => {
    for (const [text, kind] of [
      ['$PRICE > 1', 'xray'],
      ['$VALUE_STARS > 1', 'reference'],
      ['$PRICE > 1', 'derived'],
      ['$value_stars > 1', 'xray'],
    ] as const) {
      assert.throws(
        () => compile(text, kind),
        (e: unknown) => e instanceof UnknownValue && e.msg.includes(`'${text.slice(1, text.indexOf(' '))}'`) && e.msg.includes('allowed: '),
      );
    }
  });

  it('refuses a value of the wrong type at its position', () => {
    const at = (text: string, kind: 'reference' | 'xray') => {
      try {
        compile(text, kind);
      } catch (error) {
        assert.ok(error instanceof InvalidExpression);
        return [error.position, error.message];
      }
      return assert.fail(`${text} compiled`);
    };
    assert.deepEqual(at("$VALUE_STARS >= 'high'", 'xray'), [16, 'expected a number for VALUE_STARS']);
    assert.deepEqual(at('$SECTOR == 3', 'reference'), [11, 'expected a quoted string for SECTOR']);
    assert.deepEqual(at("$PRICE_DATE > '2024-02-30'", 'reference'), [14, "expected a date 'YYYY-MM-DD' for PRICE_DATE"]);
    assert.deepEqual(at('$PRICE > 1e999', 'reference'), [9, 'number out of range for PRICE']);
  });
});
