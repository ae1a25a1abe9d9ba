import { Router } from 'itty-router';
import { authorize } from '../lib/auth/authenticate.js';
import { callerLimits } from '../lib/auth/rate-limits.js';
import { errorResponse, invalid, isStorageFull, notFound, ServiceError } from '../lib/http/errors.js';
import { STARTING_HEADERS, startupNeedOf, stillStarting } from '../lib/http/startup.js';
import type { Env } from '../lib/ports.js';
import { consoleRoute } from './console.js';
import { ROUTES } from './index.js';
import type { Handler, RouteRequest, RouteSpec } from './route.js';

export interface App {
  fetch(request: Request, env: Env, ctx?: unknown): Promise<Response>;
}

/**
 * Serves the route list (functions/index.ts). The router is a plain function: tests call
 * `createRouter().fetch(new Request(...), env)` with no server.
 *
 * Whatever arrives, the answer has CONTRACT.md's error shape: a request whose URL cannot be parsed
 * (a malformed Host header becomes part of it) is refused before any route sees it, and anything
 * thrown, even outside a handler, becomes a JSON error without a stack.
 */
export function createRouter(): App {
  const router = routes();
  return {
    async fetch(request, env, ctx) {
      if (!URL.canParse(request.url)) return errorResponse(invalid('the request URL or its Host header is not valid'));
      try {
        return await router.fetch(request as RouteRequest, env, ctx);
      } catch (err) {
        return unexpected(err, request, env);
      }
    },
  };
}

function unexpected(err: unknown, request: Request, env: Env): Response {
  const where = { method: request.method, path: new URL(request.url).pathname };
  if (isStorageFull(err)) env.log.warn('storage full: write refused', { ...where, error: String(err) });
  else if (!(err instanceof ServiceError)) env.log.error('unexpected error', { ...where, error: String(err) });
  return errorResponse(err);
}

function routes() {
  const router = Router<RouteRequest, [Env, unknown?]>({ catch: unexpected });
  // The one start-up check, access check and rate limit: the handler then sees the caller as
  // `env.actor` (handlers called directly, as in tests, act as the service). The health check and the
  // console's files are open: not limited (monitors poll the one, the other holds no data and a page
  // load fetches many) and served while the service starts (the health check says it is starting).
  const limits = callerLimits();
  const guarded =
    ({ path, access, handler }: RouteSpec, open = false): Handler =>
    async (request, env, ctx) => {
      const starting = open ? null : await env.startup?.waiting(startupNeedOf(path));
      if (starting) return errorResponse(stillStarting(starting), STARTING_HEADERS);
      const admitted = open ? { actor: await authorize(request, env, ctx, access) } : await limits.admit(request, env, ctx, access);
      if ('refusal' in admitted) return admitted.refusal;
      return handler(request, { ...env, actor: admitted.actor }, ctx);
    };
  for (const spec of ROUTES) router[spec.method](spec.path, guarded(spec, spec.path === '/health'));
  router
    .all('/api/*', (request) => {
      throw notFound(`no route for ${request.method} ${new URL(request.url).pathname}`);
    })
    .get('*', guarded(consoleRoute, true))
    .all('*', (request) => {
      throw notFound(`no route for ${request.method} ${new URL(request.url).pathname}`);
    });
  return router;
}
