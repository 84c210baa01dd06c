import type { ErrorObject } from 'ajv';
import { ProblemError, type ValidationIssue } from '../problem.ts';

const PART_NAMES: ReadonlyMap<string, string> = new Map([
  ['requestBody', 'body'],
  ['query', 'query'],
  ['path', 'path'],
  ['headers', 'header'],
]);

/** Where an ajv error points, as the vendor's `loc` list: ["body", "config", "manager"]. */
export function issueOf(error: ErrorObject): ValidationIssue {
  const [part = '', ...rest] = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const loc: (string | number)[] = [PART_NAMES.get(part) ?? part, ...rest.map((s) => (/^\d+$/.test(s) ? Number(s) : s))];
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') loc.push(String(params.missingProperty));
  if (error.keyword === 'additionalProperties') loc.push(String(params.additionalProperty));
  // A key that is not a valid name of its map (`propertyNames`) is located at the key, not at the map.
  if (error.propertyName !== undefined) loc.push(error.propertyName);
  else if (error.keyword === 'propertyNames') loc.push(String(params.propertyName));
  const msg =
    error.keyword === 'additionalProperties'
      ? 'is not an allowed field'
      : error.keyword === 'enum'
        ? `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
        : (error.message ?? 'is invalid');
  return { loc, msg, type: error.keyword };
}

/**
 * A request that violates the contract. Query parameters alone (paging, embed, …) are a 400
 * `invalid_parameter`; anything in the body or headers is a 422 `validation_failed`.
 */
export function validationProblem(errors: ErrorObject[]): ProblemError {
  // oneOf/anyOf and propertyNames add a summary error next to the specific errors: keep the specific ones.
  const specific = errors.filter((e) => !['oneOf', 'anyOf', 'if', 'propertyNames'].includes(e.keyword));
  return issuesProblem(dedupe((specific.length > 0 ? specific : errors).map(issueOf)));
}

/** The problem for violations found by the contract or by the service's own checks of a request. */
export function issuesProblem(issues: ValidationIssue[]): ProblemError {
  const detail = issues.map((i) => `${i.loc.join('.')} ${i.msg}`).join('; ');
  // Ids in paths are plain strings in the contracts; one that cannot be an id names nothing.
  if (issues.every((i) => i.loc[0] === 'path')) return new ProblemError(404, 'not_found', 'No such resource.');
  if (issues.every((i) => i.loc[0] === 'query')) {
    return new ProblemError(400, 'invalid_parameter', detail, { errors: issues });
  }
  return new ProblemError(422, 'validation_failed', detail, { errors: issues });
}

function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = JSON.stringify([i.loc, i.msg]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
