import type { Knex } from 'knex';
import type { Principal } from '../domain/principal.ts';
import { InvalidParameter } from '../domain/errors.ts';
import type { EntityKind } from '../domain/entities/kind.ts';
import { getPath, type Doc } from '../domain/merge.ts';
import { canRead } from '../domain/permissions.ts';
import { findEntities, type EntityRow } from '../store/entities.ts';
import { presentEntity } from './present.ts';

/** The reference fields named by `embed`, checked against what the collection can embed. */
export function embedFields(kind: Pick<EntityKind, 'embeddable'>, embed: unknown): string[] {
  if (embed === undefined || embed === '') return [];
  const names = String(embed)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.find((n) => !kind.embeddable.includes(n));
  if (unknown !== undefined) {
    const allowed = kind.embeddable.length ? kind.embeddable.join(', ') : 'nothing';
    throw new InvalidParameter(['query', 'embed'], `names ${unknown}, which is not a reference field of this collection (it can embed ${allowed}).`);
  }
  return names;
}

/** The entities the given rows point to through `fields`, keyed by id, that the caller may read. */
export async function embedded(trx: Knex.Transaction, principal: Principal, rows: EntityRow[], fields: string[]): Promise<Doc> {
  if (fields.length === 0) return {};
  const ids = new Set<string>();
  for (const row of rows) {
    for (const field of fields) {
      const id = getPath(row.doc, field);
      if (typeof id === 'string' && /^[A-Z]/.test(id)) ids.add(id);
    }
  }
  const found = await findEntities(trx, principal.tenantId, [...ids]);
  return Object.fromEntries(found.filter((row) => canRead(principal, row)).map((row) => [row.id, presentEntity(row)]));
}
