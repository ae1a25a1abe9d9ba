import type { Env } from '../lib/env.js';
import { json } from '../lib/http.js';
import { openApiDocument } from '../lib/api/openapi.js';
import { ROUTES } from '../lib/router.js';

let document: ReturnType<typeof openApiDocument> | undefined;

/** GET /api/openapi.json: made from the route table on first request (it cannot change while running). */
export async function handleOpenApi(_request: Request, env: Env): Promise<Response> {
  document ??= openApiDocument(ROUTES, env.version);
  return json(document);
}
