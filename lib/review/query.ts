import { z } from 'zod';

/**
 * Paging parameters as they arrive in a query string. A limit is a whole number from 1; a larger
 * one than `max` is clamped rather than refused, so a console asking for "everything" still works.
 */
export function limitParam(defaultLimit: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform((text) => Math.min(Number(text), max))
    .pipe(z.number().min(1, 'must be at least 1'))
    .default(defaultLimit);
}

export const offsetParam = z
  .string()
  .regex(/^\d+$/, 'must be a whole number of 0 or more')
  .transform(Number)
  .pipe(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER))
  .default(0);
