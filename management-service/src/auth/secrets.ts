import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (secret: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(secret, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));

const COST = { N: 16_384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** A random token of `bytes` bytes, base64url. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** SHA-256 digest: enough for high-entropy tokens, which cannot be guessed from their digest. */
export const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

/** A slow hash for access-key secrets: `scrypt$N$r$p$salt$hash`. */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(secret, salt, 32, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(secret, Buffer.from(salt, 'base64url'), expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: COST.maxmem });
  return timingSafeEqual(actual, expected);
}

/** Spends the time of one verification, so an unknown key id answers as slowly as a wrong secret. */
export async function verifyNothing(): Promise<void> {
  await scrypt('', Buffer.alloc(16), 32, COST);
}
