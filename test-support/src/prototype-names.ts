/**
 * Names a client may send that a plain object already answers for: every member of
 * `Object.prototype` (`constructor`, `toString`, `hasOwnProperty`, `__proto__`, …) and `prototype`.
 * Looked up in a plain object with `obj[name]`, they find a function or the prototype instead of
 * nothing (docs/adr/0019-no-5xx-input.md).
 */
export const PROTOTYPE_NAMES: readonly string[] = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__', 'prototype'])].sort();

/**
 * The members of `Object.prototype` and what each holds, to show that a request polluted nothing
 * in the process that served it (the test platform runs both services in the test's process).
 */
export function prototypeSnapshot(): [string, unknown][] {
  return Object.getOwnPropertyNames(Object.prototype)
    .sort()
    .map((name) => {
      const d = Object.getOwnPropertyDescriptor(Object.prototype, name)!;
      return [name, d.value ?? d.get];
    });
}
