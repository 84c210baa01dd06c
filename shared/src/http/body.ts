import type { NextFunction, Request, Response } from 'express';
import { ProblemError } from '../problem.ts';

/** The media type of a request without parameters, lower case (`application/json`). */
export function mediaType(req: Request): string | undefined {
  return req.headers['content-type']?.split(';')[0]?.trim().toLowerCase() || undefined;
}

export const isJson = (type: string | undefined): boolean => type === 'application/json' || (type?.endsWith('+json') ?? false);

/**
 * Decodes the raw body read by express.raw: JSON becomes a value (malformed JSON is a 400), text
 * becomes a string, anything else stays a Buffer and is refused after routing with a 415 unless
 * the operation accepts that media type. An empty body becomes undefined.
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
      req.body = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      return next(new ProblemError(400, 'malformed_json', `The request body is not valid JSON: ${(error as Error).message}.`));
    }
  } else if (type?.startsWith('text/')) {
    req.body = raw.toString('utf8');
  }
  next();
}
