import type { z } from 'zod';
import type { NamedAnswer } from '../lib/api/answer.js';
import type { DescribedRoute } from '../lib/api/openapi.js';
import type { Access } from '../lib/auth/authenticate.js';
import { readBody } from '../lib/http/json.js';
import { pathParam } from '../lib/http/params.js';
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

/** What a route declares beyond its method, path, role and summary: its schemas, its answer and its handler. */
export type RouteContract = Omit<RouteSpec, 'method' | 'path' | 'access' | 'summary'>;

/**
 * A route declared in one call, its line reading like the API's table:
 * `route('get', '/api/tokens', 'admin', 'Personal API tokens', { answer: Tokens, handler })`.
 */
export function route(method: RouteSpec['method'], path: string, access: Access, summary: string, contract: RouteContract): RouteSpec {
  return { method, path, access, summary, ...contract };
}

/**
 * The handler of a route about one record named in its path: reads the id (a clean 404 when it
 * names none), lets the domain act on it and sends the result through the route's answer.
 */
export function recordHandler<S extends z.ZodType>(what: string, answer: NamedAnswer<S>, act: (env: Env, id: string) => Promise<z.output<S>>): Handler {
  return async (request, env) => answer.send(await act(env, pathParam(request, 'id', what)));
}

/** The same for a change to the record: its body, read through `Body` after the id, goes to `act`. */
export function recordChangeHandler<B extends z.ZodType, S extends z.ZodType>(
  what: string,
  Body: B,
  answer: NamedAnswer<S>,
  act: (env: Env, id: string, body: z.output<B>) => Promise<z.output<S>>,
): Handler {
  return async (request, env) => {
    const id = pathParam(request, 'id', what);
    return answer.send(await act(env, id, await readBody(request, env.config.SVC_MAX_BODY_BYTES, Body)));
  };
}

/** A POST that creates a record from its body, answering 201 with what `create` made. */
export function creationRoute<B extends z.ZodType, S extends z.ZodType>(
  path: string,
  access: Access,
  summary: string,
  Body: B,
  answer: NamedAnswer<S>,
  create: (env: Env, body: z.output<B>) => Promise<z.output<S>>,
): RouteSpec {
  const handler: Handler = async (request, env) => answer.send(await create(env, await readBody(request, env.config.SVC_MAX_BODY_BYTES, Body)), 201);
  return route('post', path, access, summary, { body: Body, answer, status: 201, handler });
}
