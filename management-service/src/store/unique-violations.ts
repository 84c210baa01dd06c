import { DuplicateValue } from '../domain/errors.ts';

/**
 * A unique violation of one of `fields` (a unique index's name → the field it protects) becomes
 * DuplicateValue (409 duplicate_value); any other error passes unchanged.
 */
export async function translateUnique<T>(work: Promise<T>, fields: Readonly<Record<string, string>>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw uniqueViolation(error, fields) ?? error;
  }
}

/** The DuplicateValue a unique violation of one of `fields` means; undefined for any other error. */
export function uniqueViolation(error: unknown, fields: Readonly<Record<string, string>>): DuplicateValue | undefined {
  const e = error as { code?: string; constraint?: string };
  const field = e.code === '23505' && e.constraint ? fields[e.constraint] : undefined;
  return field ? new DuplicateValue(field) : undefined;
}
