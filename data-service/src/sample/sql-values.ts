// SQL text of JavaScript values, to insert generated rows in one statement.

/** A SQL literal of a JS value (strings quoted, null for undefined). */
export const sqlLiteral = (v: unknown): string =>
  v === undefined || v === null
    ? 'null'
    : typeof v === 'number'
      ? String(v)
      : typeof v === 'boolean'
        ? String(v)
        : Array.isArray(v)
          ? `[${v.map(sqlLiteral).join(', ')}]`
          : `'${String(v).replace(/'/g, "''")}'`;

/** `(values (…), (…)) t(col, …)` of rows, for use in a from clause. */
export const sqlValues = (alias: string, columns: string[], rows: unknown[][]) =>
  `(values ${rows.map((r) => `(${r.map(sqlLiteral).join(', ')})`).join(', ')}) ${alias}(${columns.join(', ')})`;
