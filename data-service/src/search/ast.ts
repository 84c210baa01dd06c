/** The AST of a smart-search filter (grammar.peggy). `at`: 0-based offset in the filter text. */
export type Operator = '>=' | '<=' | '>' | '<' | '==' | '!=';

export type FilterValue = { kind: 'number'; text: string; at: number } | { kind: 'string'; value: string; at: number };

export type Filter = { type: 'and' | 'or'; items: Filter[] } | { type: 'compare'; field: string; fieldAt: number; op: Operator; value: FilterValue };
