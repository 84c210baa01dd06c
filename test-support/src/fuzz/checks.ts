import type { OpenAPIV3_1 } from 'openapi-types';
import type { FuzzAnswer } from './runner.ts';

/**
 * What an error body must never show: a stack frame or source position, a database's own words
 * (SQLSTATE, a relation, a violated constraint, a syntax error near), a file path of the server, or
 * an internal address.
 */
const INTERNALS: readonly [string, RegExp][] = [
  ['a stack frame', /\n\s+at \S.*\(|\.(ts|js|mjs):\d+:\d+/],
  [
    'database wording',
    /SQLSTATE|relation "|violates (unique|foreign key|check|not-null) constraint|syntax error at or near|duplicate key value|\bpg_[a-z_]+\(|DuckDB|Binder Error|Catalog Error/i,
  ],
  ['a server path', /\/node_modules\/|file:\/\/\/|\/work\/|\/src\/[a-z-]+\//],
  ['an internal address', /\b(127\.0\.0\.1|localhost|0\.0\.0\.0):\d{2,5}\b|ECONNREFUSED|ETIMEDOUT/],
];

/** Which internal detail an error body shows, if any. */
export function leakedInternals(text: string): string | undefined {
  return INTERNALS.find(([, pattern]) => pattern.test(text))?.[0];
}
/**
 * What is wrong with an answer, or undefined: a 5xx (501 only where `notBuilt` allows it, 503
 * never), or an error that is not problem+json with a code of the contract's enum.
 */
export function answerProblem(answer: FuzzAnswer, codes: readonly string[], notBuilt: boolean): string | undefined {
  if (answer.status >= 500 && !(answer.status === 501 && notBuilt)) return `answered ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (answer.status < 400) return undefined;
  const leaked = leakedInternals(answer.text);
  if (leaked) return `answered ${answer.status} showing ${leaked}: ${answer.text.slice(0, 300)}`;
  if (!answer.contentType.startsWith('application/problem+json')) return `answered ${answer.status} as ${answer.contentType}: ${answer.text.slice(0, 300)}`;
  const body = answer.body as { status?: unknown; code?: unknown; detail?: unknown } | undefined;
  if (body?.status !== answer.status || typeof body.detail !== 'string' || !codes.includes(String(body.code))) {
    return `answered ${answer.status} with a problem outside the contract: ${answer.text.slice(0, 300)}`;
  }
  return undefined;
}

/** The ErrorCode enum of a dereferenced contract. */
export const errorCodes = (doc: OpenAPIV3_1.Document): string[] => (doc.components?.schemas?.ErrorCode as { enum?: string[] } | undefined)?.enum ?? [];
