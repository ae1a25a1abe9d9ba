import { jsonAnswer } from './json-answer.js';

/** The one error type handlers throw; `errorResponse` turns anything into CONTRACT.md's error shape. */

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  provider_disabled: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  quota_exhausted: 429,
  rate_limited: 429,
  internal: 500,
  provider_error: 502,
  unavailable: 503,
  insufficient_storage: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ServiceError';
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const invalid = (message: string) => new ServiceError('invalid_request', message);
export const notFound = (message: string) => new ServiceError('not_found', message);
export const conflict = (message: string) => new ServiceError('conflict', message);

export function errorBody(code: ErrorCode, message: string) {
  return { error: { code, message } };
}

/**
 * True for a write refused because the disk (or the database's page limit) is full: the errno of a
 * file write, SQLite's SQLITE_FULL from better-sqlite3, or the same words in a D1 or R2 message.
 * Such a failure is the machine's state, not the request's or the job's: the request answers 507
 * and a job waits and runs again (lib/jobs/loops.ts).
 */
export function isStorageFull(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL') return true;
  return /SQLITE_FULL|database or disk is full|no space left on device/i.test(error.message);
}

export const STORAGE_FULL_MESSAGE = 'storage is full: the write was refused and what was stored before is kept; free disk space and try again';

/** Unexpected errors become a 500 whose message carries no stack, path or secret. */
export function errorResponse(err: unknown, headers?: Readonly<Record<string, string>>): Response {
  if (isStorageFull(err)) err = new ServiceError('insufficient_storage', STORAGE_FULL_MESSAGE);
  const known = err instanceof ServiceError ? err : null;
  const code: ErrorCode = known ? known.code : 'internal';
  const message = known ? known.message : 'internal error';
  return jsonAnswer(JSON.stringify(errorBody(code, message)), ERROR_STATUS[code], headers);
}
