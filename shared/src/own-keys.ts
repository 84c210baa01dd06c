/**
 * Reading and writing the keys of a plain JSON object by a name that came from a client. `obj[name]`
 * finds `Object.prototype`'s members (`constructor`, `toString`, `__proto__`) on any object, and
 * `obj[name] = v` with `__proto__` replaces the object's prototype instead of adding a key
 * (docs/adr/0019-no-5xx-input.md): these look at and add own keys only.
 */

/** The object's own value at `key`, or undefined. */
export function ownValue<T>(obj: { readonly [key: string]: T } | undefined, key: string): T | undefined {
  return obj !== undefined && Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Sets `key` as an own, enumerable key of `obj`, whatever its name. */
export function setOwn<T>(obj: { [key: string]: T }, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}
