import { notFound } from './errors.js';

export type ParamRequest = Request & { params?: Record<string, string> };

/** A path parameter, decoded; a malformed escape cannot name any record, so it is a clean 404. */
export function pathParam(request: ParamRequest, name: string, what: string): string {
  const raw = request.params?.[name] ?? '';
  let value = '';
  try {
    value = decodeURIComponent(raw);
  } catch {
    value = '';
  }
  if (!value) throw notFound(`unknown ${what}: ${raw}`);
  return value;
}
