import { Router } from 'itty-router';
import { handleConsole } from '../functions/console.js';
import { handleHealth } from '../functions/health.js';
import { handleMedia } from '../functions/media.js';
import { handleProviderUpdate } from '../functions/providers-update.js';
import type { Env } from './env.js';
import { errorResponse, notFound, ServiceError } from './errors.js';

export type RouteRequest = Request & { params: Record<string, string> };
type Handler = (request: RouteRequest, env: Env, ctx?: unknown) => Promise<Response>;

/**
 * Every route, registered explicitly. The router is a plain function: tests call
 * `createRouter().fetch(new Request(...), env)` with no server.
 */
export function createRouter() {
  const router = Router<RouteRequest, [Env, unknown?]>({
    catch: (err, request, env) => {
      if (!(err instanceof ServiceError)) {
        env.log.error('unexpected error', { method: request.method, path: new URL(request.url).pathname, error: String(err) });
      }
      return errorResponse(err);
    },
  });
  const route = (handler: Handler) => handler;
  router
    .get('/health', route(handleHealth))
    .patch('/api/providers/:id', route(handleProviderUpdate))
    .get('/media/*', route(handleMedia))
    .all('/api/*', (request) => {
      throw notFound(`no route for ${request.method} ${new URL(request.url).pathname}`);
    })
    .get('*', route(handleConsole))
    .all('*', (request) => {
      throw notFound(`no route for ${request.method} ${new URL(request.url).pathname}`);
    });
  return router;
}
