import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { exportPKCS8, generateKeyPair } from 'jose';

/** A new ES256 key for the management service's tokens (PKCS #8 PEM), for a platform that starts afresh. */
export async function newSigningKey(): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return exportPKCS8(privateKey);
}

/**
 * The signing key kept in `file`, readable by its owner only; made on first use and reused after,
 * so that tokens handed out before a restart stay valid.
 */
export async function signingKeyFile(file: string): Promise<string> {
  if (!existsSync(file)) writeFileSync(file, await newSigningKey(), { mode: 0o600 });
  chmodSync(file, 0o600);
  return readFileSync(file, 'utf8');
}
