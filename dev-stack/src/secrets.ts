import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';

/** A random password (192 bits, base64url: safe in URLs and SQL literals). */
export function newSecret(): string {
  return randomBytes(24).toString('base64url');
}

/** The secret kept in `file`, readable by its owner only; made on first use and reused after. */
export function secretFile(file: string): string {
  try {
    writeFileSync(file, newSecret() + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  chmodSync(file, 0o600);
  const secret = readFileSync(file, 'utf8').trim();
  if (!secret) throw new Error(`${file} is empty: write the password into it, or remove it to have a new one made`);
  return secret;
}
