import fc from 'fast-check';

// The catalogue of hostile values: NUL, unpaired surrogates, numbers beyond a double, huge
// integers, deep nesting, long strings, wrong types.

/** A number (or any JSON) written as this text in the JSON: JSON.stringify cannot write 1e999999. */
export class RawJson {
  constructor(readonly text: string) {}
}

const RAW = '\u0001raw:';
/** JSON text of a value that may hold RawJsons. */
export function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => (v instanceof RawJson ? `${RAW}${raws.push(v.text) - 1}` : v));
  return text === undefined ? 'null' : text.replace(/"\\u0001raw:(\d+)"/g, (_, i: string) => raws[Number(i)]!);
}

export const hostileNumbers = [
  '1e999999',
  '-1e999999',
  '99999999999999999999',
  '-99999999999999999999',
  '1e-999999',
  '1e309',
  '9223372036854775808',
  '18446744073709551616',
  '-0',
  '0.1',
  '1.5',
  '-1',
  '0',
  '4294967296',
  '2147483648',
];

export const hostileStrings = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  'a\ud800\u0000',
  '',
  ' ',
  "'",
  "''",
  '"',
  '\\',
  '%00',
  '%',
  '*',
  '\\*',
  '😀',
  '\u202e',
  'é'.repeat(3),
  'null',
  'true',
  '0',
  '-1',
  '1e999999',
  '99999999999999999999',
  'NaN',
  'Infinity',
  '0000-01-01',
  '9999-12-31',
  '9999-12-31T23:59:59-14:00',
  '2024-02-30',
  '2024-13-45T25:61:61Z',
  '../../etc/passwd',
  "' or 1=1 --",
  // Names a plain object answers for (docs/adr/0019-no-5xx-input.md).
  '__proto__',
  'constructor',
  'toString',
  '$ASSET_CLASS == \u0000',
  'U01HZ6HGTC3K9582APC9AFTCDHF',
  'P00000000000000000000000000',
  'x'.repeat(300),
  'y'.repeat(100_000),
];

/** A value nested `depth` levels deep, alternating arrays and objects (as JSON text: JSON.stringify would overflow the stack). */
export function nested(depth: number): RawJson {
  const open = Array.from({ length: depth }, (_, i) => (i % 2 ? '[' : '{"a":')).join('');
  const close = Array.from({ length: depth }, (_, i) => (i % 2 ? ']' : '}'))
    .reverse()
    .join('');
  return new RawJson(`${open}1${close}`);
}

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...hostileStrings) },
  { weight: 3, arbitrary: fc.constantFrom(...hostileNumbers.map((n) => new RawJson(n))) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': 1 }, { '\u0000': 1 }, { '\ud800': 'x' }, 1.5, -1, 0) },
  { weight: 1, arbitrary: fc.constantFrom(30, 65, 200, 20_000).map(nested) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      Array.from({ length: 10_000 }, (_, i) => i),
      Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i])),
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);
