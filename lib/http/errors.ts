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

/** Unexpected errors become a 500 whose message carries no stack, path or secret. */
export function errorResponse(err: unknown, headers?: HeadersInit): Response {
  const known = err instanceof ServiceError ? err : null;
  const code: ErrorCode = known ? known.code : 'internal';
  const message = known ? known.message : 'internal error';
  return new Response(JSON.stringify(errorBody(code, message)), {
    status: ERROR_STATUS[code],
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}
