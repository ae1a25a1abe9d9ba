import { z } from 'zod';
import { CSRF_HEADER, SESSION_COOKIE } from '../auth/authenticate.js';
import type { NamedAnswer } from './answer.js';
import { ErrorBody } from './records.js';

/** What the OpenAPI document needs to know of a route; each route file (functions/*.ts) declares it. */
export interface DescribedRoute {
  method: 'get' | 'post' | 'patch';
  path: string;
  access: 'public' | 'operator' | 'admin';
  summary: string;
  /** The JSON answer's schema; absent for answers that are files. */
  answer?: NamedAnswer;
  /** What a route that answers a file sends instead: its media types and what it is. */
  file?: { types: string[]; description: string };
  /** The status of a successful answer (200 unless the route creates something). */
  status?: number;
  /** Answers other than errors that a status other than success carries (health's 503). */
  otherAnswers?: Record<number, NamedAnswer>;
  query?: z.ZodType;
  body?: z.ZodType;
}

type JsonSchema = Record<string, unknown>;

// Request schemas are read as the client writes them (before the handler's transforms); answers
// as the service writes them. What JSON Schema cannot say (a refinement) is left out, not refused.
function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** `/api/submissions/:id/review` as OpenAPI writes it, `/media/*` as `/media/{path}`. */
export const openApiPath = (path: string) => path.replace(/:([a-z_]+)/g, '{$1}').replace(/\*$/, '{path}');

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

function operation(route: DescribedRoute) {
  const parameters: JsonSchema[] = [...route.path.matchAll(/:([a-z_]+)|\*$/g)].map((match) => ({
    name: match[1] ?? 'path',
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (route.query) {
    const query = schemaOf(route.query, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query.required?.includes(name) ?? false, schema });
    }
  }
  const success = route.answer
    ? { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${route.answer.name}` } } } }
    : {
        description: route.file?.description ?? 'a file',
        content: Object.fromEntries(
          (route.file?.types ?? ['application/octet-stream']).map((type) => [type, { schema: { type: 'string', format: 'binary' } }]),
        ),
      };
  const responses: Record<string, unknown> = { [String(route.status ?? 200)]: success };
  for (const [status, { name }] of Object.entries(route.otherAnswers ?? {})) {
    responses[status] = { description: 'A degraded answer', content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } };
  }
  if (route.query || route.body || parameters.length) responses['400'] = errorResponse('invalid_request: a parameter or the body is not valid');
  if (route.access !== 'public') responses['401'] = errorResponse('unauthenticated: no valid session or token');
  if (route.access === 'admin') responses['403'] = errorResponse('forbidden: the caller is not an administrator');
  if (route.path.includes(':') || route.path.endsWith('*')) responses['404'] = errorResponse('not_found: nothing has this id');
  responses.default = errorResponse('any other error, in the same shape');
  return {
    summary: route.summary,
    operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    'x-access': route.access,
    ...(route.access === 'public' ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(route.body, 'input') } } } } : {}),
    responses,
  };
}

/**
 * Every answer the routes name, once each. Routes that answer alike share one schema object (one
 * home for each shape); two different schemas under one name would make one of them a lie.
 */
export function answersOf(routes: readonly DescribedRoute[]): NamedAnswer[] {
  const byName = new Map<string, NamedAnswer>();
  for (const route of routes) {
    for (const named of [route.answer, ...Object.values(route.otherAnswers ?? {})].filter((a) => a !== undefined)) {
      const known = byName.get(named.name);
      if (known && known.schema !== named.schema) throw new Error(`two different answers are named ${named.name} (${route.method} ${route.path})`);
      byName.set(named.name, named);
    }
  }
  return [...byName.values()];
}

/** The OpenAPI 3.1 document of the routes, generated from their own zod schemas. */
export function openApiDocument(routes: readonly DescribedRoute[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[openApiPath(route.path)] ??= {})[route.method] = operation(route);
  const schemas: Record<string, JsonSchema> = {
    Error: {
      ...schemaOf(ErrorBody, 'output'),
      description: 'CONTRACT.md section 1: every error, whatever the request',
    },
  };
  for (const { name, schema } of answersOf(routes)) schemas[name] = schemaOf(schema, 'output');
  return {
    openapi: '3.1.0' as const,
    info: {
      title: 'Image rights detection service',
      version,
      description: 'Submissions, evidence, review decisions and the watchlist. Statuses, decisions and states are the Korean words of CONTRACT.md section 2.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }, { session: [] }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'SVC_ADMIN_TOKEN or a personal API token' },
        session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: `the console's session; state-changing requests also send ${CSRF_HEADER}` },
      },
      schemas,
    },
    paths,
  };
}
