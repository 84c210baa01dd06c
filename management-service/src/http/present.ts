import { isId } from '@platform/shared';
import { entityKinds } from '../domain/entities/catalog.ts';
import type { EntityKind } from '../domain/entities/kind.ts';
import type { Doc } from '../domain/merge.ts';
import { readOptimization } from '../domain/optimization-request.ts';
import type { EntityRow, VersionRow } from '../store/entities.ts';

/** version_authored_by_user_id names a user; changes by machine clients have none. */
const authorUserId = (author: string | null) => (author && isId('U', author) ? author : null);

const readers = new Map([...entityKinds.map((kind): [string, EntityKind['read']] => [kind.type, kind.read]), ['optimizations', readOptimization]]);

/** The answer for one entity: its fields and the metadata of the interface. */
export function presentEntity(row: EntityRow, at?: VersionRow): Doc {
  const state = at ?? row;
  const read = readers.get(row.type);
  return {
    id: row.id,
    ...(read ? read(state.doc) : state.doc),
    creation_datetime: row.created_at.toISOString(),
    version: state.version,
    version_datetime: state.version_at.toISOString(),
    version_authored_by_user_id: authorUserId(state.version_author_id),
    deleted: state.deleted,
    readable_by: row.readable_by,
    modifiable_by: row.modifiable_by,
    _embedded: {},
  };
}

export function presentVersion(version: VersionRow, patch: unknown[]): Doc {
  return {
    version: version.version,
    version_datetime: version.version_at.toISOString(),
    version_authored_by_user_id: authorUserId(version.version_author_id),
    patch: patch as Doc[],
  };
}
