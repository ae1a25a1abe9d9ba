import { openApiDocument, type DescribedRoute } from '../lib/api/openapi.js';
import { json } from '../lib/http/json.js';
import type { Env } from '../lib/ports.js';

/**
 * GET /api/openapi.json over the route list that registers it (functions/index.ts, which hands
 * itself in): made on first request, as the list cannot change while running.
 */
export function openApiHandler(routes: () => readonly DescribedRoute[]) {
  let document: ReturnType<typeof openApiDocument> | undefined;
  return async (_request: Request, env: Env): Promise<Response> => json((document ??= openApiDocument(routes(), env.version)));
}
