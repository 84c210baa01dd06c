/**
 * A contract violation of a problem+json answer (`errors[]`: `loc`, `msg`, `type`) in words an
 * operator reads: which field, what is wrong with it and an example of a good value. The service
 * words `msg` after the JSON Schema keyword that failed, and for `pattern` that is the regular
 * expression itself, which says nothing to a person; the forms the contracts use are named here
 * with an example, any other pattern as "not in the expected form". Pure.
 */
export type Issue = { loc?: readonly (string | number)[]; msg?: string; type?: string };
export type PlainIssue = { field: string; where: string; problem: string; example?: string };

const PARTS: Record<string, string> = { body: 'in the body', query: 'in the address (query)', path: 'in the address (path)', header: 'in a header' };
type Form = { problem: string; example?: string };

/** The contracts' patterns, as the service quotes them, in words with an example. */
const FORMS: ReadonlyMap<string, Form> = new Map([
  ['^[A-Z]{3}$', { problem: 'must be a currency code of three capital letters', example: 'EUR' }],
  [
    '^[A-Z]{2}[A-Z0-9]{9}[0-9]$',
    { problem: 'must be an ISIN: two capital letters, nine capital letters or digits, and a check digit', example: 'IE00B4L5Y983' },
  ],
  ['^([A-Z]{2}[A-Z0-9]{9}[0-9]|\\$[A-Z]{3})$', { problem: 'must be an ISIN, or $ and a currency code for cash', example: '$EUR' }],
  ['^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$', { problem: 'must be a decimal number written as text, without leading zeros or exponent', example: '"-12.50"' }],
  ['^(0|[1-9][0-9]*)(\\.[0-9]+)?$', { problem: 'must be a decimal number of zero or more written as text, without leading zeros', example: '"1000.50"' }],
  ['^([1-9][0-9]*(\\.[0-9]+)?|0\\.[0-9]*[1-9][0-9]*)$', { problem: 'must be a decimal number above zero written as text', example: '"250.00"' }],
  ['^[A-Z]{2}[A-Z0-9]{14,30}$', { problem: 'must be an IBAN in capitals without spaces', example: 'DE89370400440532013000' }],
  ['^\\+[1-9][0-9]{7,15}$', { problem: 'must be a phone number with + and the country code, without spaces', example: '+4930123456' }],
  ['^[a-z]{2}-[A-Z]{2}$', { problem: 'must be a language and a country', example: 'en-GB' }],
  ['^[a-z]{2}(-[A-Z]{2})?$', { problem: 'must be a language, optionally with a country', example: 'en or en-GB' }],
  ['^[A-Z][A-Z0-9_]{0,63}$', { problem: 'must start with a capital letter, then capitals, digits or _ (at most 64)', example: 'FIXED_INCOME' }],
  ['^[a-z][a-z0-9_]{0,63}$', { problem: 'must start with a lower-case letter, then lower-case letters, digits or _ (at most 64)', example: 'risk_score' }],
  ['^((0|[1-9][0-9]{0,18})-(0|[1-9][0-9]{0,17}))?$', { problem: 'must be a cursor the service returned (the next_cursor of a previous answer), or left out' }],
]);
/** An entity id: a type letter (or any capital) and a ULID. */
const ID_PATTERN = /^\^([A-Z]|\[A-Z\])\[0-9A-HJKMNP-TV-Z\]\{26\}\$$/;
const ULID_EXAMPLE = '01JP9ZMQCN0XG3YNRRKJ6T0FZ3';

function patternForm(pattern: string): Form {
  const known = FORMS.get(pattern);
  if (known) return known;
  const id = pattern.match(ID_PATTERN);
  if (id) {
    const letter = id[1]!.length === 1 ? id[1]! : undefined;
    return {
      problem: `must be an id: ${letter ? `the letter ${letter}` : 'its type letter'} followed by 26 characters of a ULID (digits and capital letters without I, L, O and U)`,
      example: `${letter ?? 'P'}${ULID_EXAMPLE}`,
    };
  }
  return { problem: 'is not in the expected form' };
}

const BOUNDS: [RegExp, (n: string) => string][] = [
  [/^must be >= (.+)$/, (n) => `must be at least ${n}`],
  [/^must be <= (.+)$/, (n) => `must be at most ${n}`],
  [/^must be > (.+)$/, (n) => `must be more than ${n}`],
  [/^must be < (.+)$/, (n) => `must be less than ${n}`],
  [/^must NOT have more than (\d+) characters?$/, (n) => `must be at most ${n} characters long`],
  [/^must NOT have fewer than (\d+) characters?$/, (n) => `must be at least ${n} characters long`],
  [/^must NOT have more than (\d+) items?$/, (n) => `must hold at most ${n} items`],
  [/^must NOT have fewer than (\d+) items?$/, (n) => `must hold at least ${n} items`],
];

const TYPES: Record<string, string> = {
  string: 'text',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

const FORMATS: Record<string, { problem: string; example: string }> = {
  'date-time': { problem: 'must be a time in UTC, RFC 3339', example: '2026-11-27T09:30:00.000Z' },
  date: { problem: 'must be a date', example: '2026-11-27' },
  email: { problem: 'must be an e-mail address', example: 'ada@example.com' },
  uri: { problem: 'must be an absolute URL', example: 'https://example.com/hook' },
};

/** Any regular expression quoted in a message, for the messages no rule above words. */
const QUOTED_PATTERN = /\s*"\^[^"]*\$"/g;

export function plainIssue(issue: Issue): PlainIssue {
  const [part, ...path] = (issue.loc ?? []).map(String);
  // A violation of a whole part (the body is not an object) names the part alone.
  const field = path.length > 0 ? path.join('.') : part ? `the ${part}` : 'the request';
  const where = (path.length > 0 && part && PARTS[part]) || '';
  const msg = (issue.msg ?? '').trim();
  const type = issue.type ?? '';
  if (type === 'pattern' || /must match pattern/.test(msg)) {
    const pattern = msg.match(/must match pattern "(.*)"$/)?.[1] ?? '';
    return { field, where, ...patternForm(pattern) };
  }
  if (type === 'required') return { field, where, problem: 'is required' };
  if (type === 'additionalProperties') return { field, where, problem: 'is not a field of this request' };
  if (type === 'type') {
    const names = msg.replace(/^must be /, '').split(',');
    return { field, where, problem: `must be ${names.map((n) => TYPES[n] ?? n).join(' or ')}` };
  }
  if (type === 'format') {
    const format = msg.match(/must match format "(.*)"/)?.[1] ?? '';
    return { field, where, ...(FORMATS[format] ?? { problem: 'is not in the expected form' }) };
  }
  for (const [bound, words] of BOUNDS) {
    const match = msg.match(bound);
    if (match) return { field, where, problem: words(match[1]!) };
  }
  const cleaned = msg.replace(QUOTED_PATTERN, '').trim();
  return { field, where, problem: cleaned || 'is not valid' };
}

/** One sentence of an issue: `Entity (entity_id, in the address (query)) must be …, e.g. P01….` */
export function issueSentence(issue: Issue): string {
  const plain = plainIssue(issue);
  const where = plain.where ? `, ${plain.where}` : '';
  return `${plain.field}${where}: ${plain.problem}${plain.example ? `, e.g. ${plain.example}` : ''}.`;
}
