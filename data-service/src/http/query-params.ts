/** A repeatable query parameter (`?fields=A&fields=B`) as a list, whether it came once or several times. */
export const queryList = (value: unknown): string[] => (value === undefined ? [] : Array.isArray(value) ? value.map(String) : [String(value)]);

/** A single query parameter, or undefined. */
export const queryOne = (value: unknown): string | undefined => (value === undefined ? undefined : String(Array.isArray(value) ? value[0] : value));
