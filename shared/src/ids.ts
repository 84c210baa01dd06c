import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * ulid's source of randomness, a byte as a fraction of 256 as ulid's own is, drawn from a pool of
 * cryptographically random bytes filled 4 KiB at a time instead of one call per character
 * (docs/adr/0031-http-hot-path.md: that was 2 % of a request's CPU).
 */
const pool = Buffer.alloc(4096);
let next = pool.length;
const pooledRandom = (): number => {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]! / 256;
};

// Monotonic within this process: ids made in the same millisecond still sort in creation order.
const ulid = monotonicFactory(pooledRandom);

/** Type letters of docs/adr/0003-ids.md: the first letter of an id names the entity type. */
export const ID_LETTERS = {
  user: 'U',
  portfolio: 'P',
  goal: 'L',
  horizon: 'H',
  policy: 'Y',
  riskProfile: 'K',
  suitabilityProfile: 'N',
  transaction: 'T',
  optimization: 'O',
  instrumentGroup: 'J',
  questionnaire: 'Q',
  accessKey: 'A',
  brokerInstruction: 'B',
} as const;

export type IdLetter = (typeof ID_LETTERS)[keyof typeof ID_LETTERS];

const ULID_BODY = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** A new id: the type letter followed by a ULID. */
export function newId(letter: IdLetter): string {
  return letter + ulid();
}

/** A bare ULID (outbound event ids, request ids). */
export function newUlid(): string {
  return ulid();
}

/** True when `value` is an id of the given type (right letter, valid ULID body). */
export function isId(letter: IdLetter, value: unknown): value is string {
  return typeof value === 'string' && value.length === 27 && value[0] === letter && ULID_BODY.test(value.slice(1));
}
