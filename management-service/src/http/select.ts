import { ownValue, setOwn } from '@platform/shared';
import type { Doc } from '../domain/merge.ts';
import type { Path } from '../query/ast.ts';

/**
 * The entity with only `id` and the selected paths. The paths are the client's names (checked
 * against the schema, which may admit any key of a map): read and written as own keys only.
 */
export function pick(entity: Doc, paths: Path[]): Doc {
  const out: Doc = { id: entity.id! };
  for (const path of paths) {
    let from: Doc | undefined = entity;
    let to: Doc = out;
    path.forEach((key, i) => {
      const value = ownValue(from, key);
      if (i === path.length - 1) {
        if (value !== undefined) setOwn(to, key, value);
      } else {
        from = value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
        let next = ownValue(to, key);
        if (!next || typeof next !== 'object' || Array.isArray(next)) setOwn(to, key, (next = {}));
        to = next;
      }
    });
  }
  return out;
}
