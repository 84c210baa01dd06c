import type { NextFunction, Request, Response } from 'express';
import { ProblemError } from '../problem.ts';

/** The media type of a request without parameters, lower case (`application/json`). */
export function mediaType(req: Request): string | undefined {
  return req.headers['content-type']?.split(';')[0]?.trim().toLowerCase() || undefined;
}

// fatal: bytes that are not UTF-8 are refused; the default decoder would replace them with U+FFFD
// and store text the client never sent (docs/adr/0040-identifiers-as-people-read-them.md). A
// byte-order mark stays in the text, as Buffer#toString kept it: JSON.parse refuses it, the CSV
// reader skips it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as text, or a 400 naming the first byte that is not UTF-8 and its line. */
export function decodeUtf8(raw: Buffer): string {
  try {
    return utf8.decode(raw);
  } catch {
    const at = firstInvalidUtf8(raw);
    const line = raw.subarray(0, at).reduce((n, byte) => (byte === 0x0a ? n + 1 : n), 1);
    throw new ProblemError(
      400,
      'invalid_encoding',
      `The request body is not UTF-8: the byte at offset ${at} (line ${line}) does not decode; send the body encoded as UTF-8.`,
    );
  }
}

/** The offset of the first byte of the first sequence that is not UTF-8 (the body is known not to decode). */
function firstInvalidUtf8(raw: Buffer): number {
  let lo = 0;
  let hi = raw.length;
  // A prefix that decodes (an unfinished sequence at its end allowed) stays one when cut shorter:
  // find the longest by halving.
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (decodes(raw.subarray(0, mid), true)) lo = mid;
    else hi = mid;
  }
  // The bad sequence begins with the unfinished one at that prefix's end, if there is one (up to 3 bytes).
  let start = lo;
  while (start > 0 && lo - start < 3 && !decodes(raw.subarray(0, start), false)) start--;
  return start;
}

const decodes = (bytes: Buffer, unfinishedEnd: boolean) => {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: unfinishedEnd });
    return true;
  } catch {
    return false;
  }
};

export const isJson = (type: string | undefined): boolean => type === 'application/json' || (type?.endsWith('+json') ?? false);

/**
 * Decodes the raw body read by express.raw: JSON becomes a value (malformed JSON is a 400), text
 * becomes a string (bytes that are not UTF-8 are a 400 in both), anything else stays a Buffer and
 * is refused after routing with a 415 unless the operation accepts that media type. An empty body
 * becomes undefined.
 */
export function decodeBody(req: Request, _res: Response, next: NextFunction): void {
  const raw = req.body as unknown;
  if (!Buffer.isBuffer(raw) || raw.length === 0) {
    req.body = undefined;
    return next();
  }
  const type = mediaType(req);
  if (isJson(type)) {
    try {
      req.body = JSON.parse(decodeUtf8(raw));
    } catch (error) {
      if (error instanceof ProblemError) return next(error);
      return next(new ProblemError(400, 'malformed_json', `The request body is not valid JSON: ${(error as Error).message}.`));
    }
  } else if (type?.startsWith('text/')) {
    try {
      req.body = decodeUtf8(raw);
    } catch (error) {
      return next(error);
    }
  }
  next();
}
