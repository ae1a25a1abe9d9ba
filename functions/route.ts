import type { DescribedRoute } from '../lib/api/openapi.js';
import type { Access } from '../lib/auth/authenticate.js';
import type { Env } from '../lib/ports.js';

export type RouteRequest = Request & { params: Record<string, string> };
export type Handler = (request: RouteRequest, env: Env, ctx?: unknown) => Promise<Response>;

/**
 * A route's whole contract, declared beside its handler in its own file: method, path, the role it
 * needs, its request schemas and its answer. The route list (functions/index.ts) gathers them; the
 * router serves them and the OpenAPI document describes them.
 */
export interface RouteSpec extends DescribedRoute {
  /** Who may call it: checked by the router, before the handler, for every route alike. */
  access: Access;
  handler: Handler;
}
