/** What the key needs of Web Crypto. */
export type RandomSource = { getRandomValues(array: Uint8Array): Uint8Array; randomUUID?: () => string };

/**
 * A new Idempotency-Key: a random UUID (version 4). A browser offers `crypto.randomUUID` only to
 * pages of a secure context (https, localhost); a page served over plain http, such as the console
 * reached by a machine's address, has `getRandomValues` alone, so the key is made from that there.
 */
export function newIdempotencyKey(source: RandomSource = globalThis.crypto): string {
  if (typeof source.randomUUID === 'function') return source.randomUUID();
  const bytes = source.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
