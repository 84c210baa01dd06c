import jsonPatch from 'fast-json-patch';
import type { Doc } from './merge.ts';

/** The state a version records: the entity's fields and whether it is deleted. */
export const versionState = (v: { doc: Doc; deleted: boolean }): Doc => ({ ...v.doc, deleted: v.deleted });

/** RFC 6902 patch from the previous version; version 1 is the whole document as one `add`. */
export function versionPatch(previous: { doc: Doc; deleted: boolean } | undefined, current: { doc: Doc; deleted: boolean }): unknown[] {
  if (!previous) return [{ op: 'add', path: '', value: versionState(current) }];
  return jsonPatch.compare(versionState(previous), versionState(current));
}
