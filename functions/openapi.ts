import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { openApiDocument, type DescribedRoute } from '../lib/api/openapi.js';
import { type RouteSpec, route } from './route.js';

const OpenApi = answer(
  'openapi',
  z.looseObject({
    openapi: z.literal('3.1.0'),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
  }),
);

/**
 * GET /api/openapi.json over the route list that registers it (functions/index.ts, which hands
 * itself in): made on first request, as the list cannot change while running.
 */
export function openApiRoute(routes: () => readonly DescribedRoute[]): RouteSpec {
  let document: ReturnType<typeof openApiDocument> | undefined;
  return route('get', '/api/openapi.json', 'public', 'This document', {
    answer: OpenApi,
    handler: async (_request, env) => OpenApi.send((document ??= openApiDocument(routes(), env.version))),
  });
}
