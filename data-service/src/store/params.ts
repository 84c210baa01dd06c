import { DOUBLE, LIST, VARCHAR, listValue, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';

/**
 * Collects the bound parameters of one statement with their DuckDB types, so no value is ever
 * spliced into SQL text: each method returns the placeholder (`$3`) that stands for the value.
 * Pass `values` and `types` together to the connection.
 */
export class SqlParams {
  readonly values: DuckDBValue[] = [];
  readonly types: DuckDBType[] = [];
  add(value: DuckDBValue, type: DuckDBType): string {
    this.values.push(value);
    this.types.push(type);
    return `$${this.values.length}`;
  }
  text(value: string): string {
    return this.add(value, VARCHAR);
  }
  number(value: number): string {
    return this.add(value, DOUBLE);
  }
  /** A string as VARCHAR, a number as DOUBLE. */
  bind(value: string | number): string {
    return typeof value === 'number' ? this.number(value) : this.text(value);
  }
  textList(values: readonly string[]): string {
    return this.add(listValue([...values]), LIST(VARCHAR));
  }
}
