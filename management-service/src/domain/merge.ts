import { ownValue, setOwn } from '@platform/shared';

/** JSON values as stored: documents are plain JSON objects. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Doc = { [key: string]: Json };

const isObject = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * RFC 7396 merge patch: objects merge key by key, `null` removes a key, anything else replaces.
 * Paths in `wholeValues` (dotted) are value objects that a patch replaces whole. The keys are the
 * client's: read and written as own keys, whatever their name (`__proto__`, `constructor`).
 */
export function mergePatch(target: Doc, patch: Doc, wholeValues: ReadonlySet<string> = new Set(), prefix = ''): Doc {
  const out: Doc = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const current = ownValue(out, key);
    if (value === null) delete out[key];
    else if (isObject(value) && !wholeValues.has(path)) setOwn(out, key, mergePatch(isObject(current) ? current : {}, value, wholeValues, path));
    else setOwn(out, key, value);
  }
  return out;
}

/** The value at a dotted path, or undefined. */
export function getPath(doc: Doc, path: string): Json | undefined {
  let value: Json | undefined = doc;
  for (const key of path.split('.')) {
    if (!isObject(value)) return undefined;
    value = ownValue(value, key);
  }
  return value;
}

/** Deep equality of JSON values (key order does not matter). */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}
