import type { Settled } from '../ports.js';

/** Turns a promise into a value that says whether it kept it (the images port's `Settled`, lib/ports.ts). */
export const settle = <T>(promise: Promise<T>): Promise<Settled<T>> =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error: error instanceof Error ? error.message : String(error) }),
  );
