import { VersionMismatch } from './errors.ts';

/** `If-Match: 3` (or `"3"`) must name the current version; no header means no condition. */
export function checkIfMatch(header: string | string[] | undefined, current: number): void {
  if (header === undefined) return;
  const wanted = Number(String(header).replace(/"/g, ''));
  if (wanted !== current) throw new VersionMismatch(current);
}
