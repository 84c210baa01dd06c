/**
 * The fields that differ between two versions of an entity, as JSON Pointers (RFC 6901): what the
 * entity page highlights. Pure: no DOM, no I/O.
 */
export type Change = { path: string; kind: 'added' | 'removed' | 'changed'; before?: unknown; after?: unknown };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One step of a JSON Pointer: `~` and `/` escaped. */
export const pointerStep = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

/** Every leaf (or whole subtree added or removed) where `after` differs from `before`, in document order. */
export function diffDocs(before: unknown, after: unknown, path = ''): Change[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key) => {
      const at = `${path}/${pointerStep(key)}`;
      if (!(key in after)) return [{ path: at, kind: 'removed' as const, before: before[key] }];
      if (!(key in before)) return [{ path: at, kind: 'added' as const, after: after[key] }];
      return diffDocs(before[key], after[key], at);
    });
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    const changes: Change[] = [];
    for (let i = 0; i < length; i++) {
      const at = `${path}/${i}`;
      if (i >= after.length) changes.push({ path: at, kind: 'removed', before: before[i] });
      else if (i >= before.length) changes.push({ path: at, kind: 'added', after: after[i] });
      else changes.push(...diffDocs(before[i], after[i], at));
    }
    return changes;
  }
  return sameValue(before, after) ? [] : [{ path, kind: 'changed', before, after }];
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether the line of `path` is changed: it is a changed path, or lies inside one (an added object's fields). */
export function isChangedPath(path: string, changed: ReadonlySet<string>): boolean {
  if (changed.has(path)) return true;
  for (let cut = path.lastIndexOf('/'); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
    if (changed.has(path.slice(0, cut))) return true;
  }
  return false;
}

/** A pointer as people read it: `/config/manager_settings/active` → `config.manager_settings.active`. */
export function readablePath(path: string): string {
  if (path === '') return '(whole document)';
  return path
    .slice(1)
    .split('/')
    .map((step) => step.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((step, i) => (/^\d+$/.test(step) ? `[${step}]` : i === 0 ? step : `.${step}`))
    .join('');
}
