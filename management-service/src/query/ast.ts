/** The typed AST of a collection query (docs/adr/0011-query-language.md). */
export type Path = string[];

export type Value = { kind: 'string'; value: string } | { kind: 'number'; text: string } | { kind: 'boolean'; value: boolean } | { kind: 'null' };

export type Operator = 'eq' | 'neq' | 'lt' | 'le' | 'gt' | 'ge';

/** `at`: the offset of the term in the query text, for errors that name a position. */
export type Condition =
  | { type: 'and' | 'or'; items: Condition[] }
  | { type: 'compare'; path: Path; op: Operator; value: Value; at: number }
  | { type: 'in'; path: Path; values: Value[]; at: number }
  | { type: 'range'; path: Path; from: Value; to: Value; at: number };

export type SortKey = { path: Path; direction: 'asc' | 'desc'; at: number };

export type Query = { where?: Condition; orderBy: SortKey[]; select?: { path: Path; at: number }[] };
