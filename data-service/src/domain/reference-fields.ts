import { UnknownValue, type Loc } from './errors.ts';

/**
 * How a reference field is typed on the way out: `text` is a JSON string and an Arrow Utf8 column,
 * `number` a JSON number and Float64 (decimal columns such as PRICE are read as doubles, which is
 * what pandas and polars would hold anyway), `date` a YYYY-MM-DD string and Date32 (days).
 */
export type FieldKind = 'text' | 'number' | 'date';

export type ReferenceField = {
  /** Upper-case name used in requests (`PRICE`). */
  name: string;
  /** Lower-case name used in answers and as the column of `instruments` (`price`). */
  key: string;
  kind: FieldKind;
  /**
   * A text field of few distinct values (a category: asset class, currency, country…): its Arrow
   * column is dictionary-encoded (docs/adr/0029-arrow-and-compression.md).
   */
  category: boolean;
};

const field = (name: string, kind: FieldKind, category = false): ReferenceField => ({ name, key: name.toLowerCase(), kind, category });
const CATEGORY = true;

/** The reference fields of docs/adr/0013-data-fields-and-arrow.md, in the order the contract lists them. */
export const REFERENCE_FIELDS: readonly ReferenceField[] = [
  field('ISIN', 'text'),
  field('NAME', 'text'),
  field('TICKER', 'text'),
  field('ASSET_CLASS', 'text', CATEGORY),
  field('ASSET_SUBCLASS', 'text', CATEGORY),
  field('INSTRUMENT_TYPE', 'text', CATEGORY),
  field('CURRENCY', 'text', CATEGORY),
  field('COUNTRY', 'text', CATEGORY),
  field('REGION', 'text', CATEGORY),
  field('SECTOR', 'text', CATEGORY),
  field('EXCHANGE', 'text', CATEGORY),
  field('MARKET_CAP', 'number'),
  field('SIZE_LABEL', 'text', CATEGORY),
  field('PRICE', 'number'),
  field('PRICE_DATE', 'date'),
  field('DIVIDEND_YIELD', 'number'),
  field('TER', 'number'),
  field('ANALYST_TARGET_PRICE', 'number'),
];

const byName = new Map(REFERENCE_FIELDS.map((f) => [f.name, f]));
const byKey = new Map(REFERENCE_FIELDS.map((f) => [f.key, f]));

/** The reference field whose lower-case name is `key`: a custom key that shadows it. */
export const fieldOfKey = (key: string): ReferenceField | undefined => byKey.get(key);

/**
 * The fields named in a request, each once, in request order. An unknown name is a 422
 * `unknown_field` at its position (`loc` + index) listing the allowed names.
 */
export function resolveFields(names: readonly string[], loc: Loc): ReferenceField[] {
  const resolved: ReferenceField[] = [];
  names.forEach((name, i) => {
    const f = byName.get(name);
    if (!f)
      throw unknownField(
        [...loc, i],
        name,
        REFERENCE_FIELDS.map((x) => x.name),
      );
    if (!resolved.includes(f)) resolved.push(f);
  });
  return resolved;
}

export function unknownField(loc: Loc, name: string, allowed: readonly string[]): UnknownValue {
  return new UnknownValue(loc, `unknown field '${name}'. Allowed: ${allowed.length > 0 ? allowed.join(', ') : 'none'}.`);
}
