import { expect } from 'vitest';
import { ImageRejected } from '../../lib/images/rejected.js';

/** The ImageRejected a promise rejects with (the test fails if it resolves or rejects otherwise). */
export async function rejectionOf(promise: Promise<unknown>): Promise<ImageRejected> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ImageRejected);
  return error as ImageRejected;
}
