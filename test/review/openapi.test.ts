import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answer } from '../../lib/api/answer.js';
import { openApiDocument, openApiPath } from '../../lib/api/openapi.js';
import { ROUTES } from '../../functions/index.js';
import { ReviewQueue } from '../../functions/review-queue.js';
import { useTestEnv } from '../helpers/env.js';
import { checkAnswer, document } from '../helpers/openapi-check.js';
import { body } from './seed.js';

const env = useTestEnv();

describe('GET /api/openapi.json', () => {
  it('is served to anyone, as OpenAPI 3.1, with every route of the router and the role it needs', async () => {
    const served = await body(env.call('GET', '/api/openapi.json', undefined, { authorization: '' }));
    expect(served.openapi).toBe('3.1.0');
    expect(served.info.version).toBe('0.1.0');
    const operations = Object.entries(served.paths).flatMap(([path, methods]) => Object.keys(methods as object).map((method) => `${method} ${path}`));
    expect(operations.sort()).toEqual(ROUTES.map((route) => `${route.method} ${openApiPath(route.path)}`).sort());
    for (const route of ROUTES) {
      const operation = served.paths[openApiPath(route.path)][route.method];
      expect(operation['x-access'], route.path).toBe(route.access);
      expect(Object.keys(operation.responses)).toContain(String(route.status ?? 200));
      expect(operation.responses.default.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      if (route.access !== 'public') expect(Object.keys(operation.responses)).toContain('401');
      if (route.access === 'admin') expect(Object.keys(operation.responses)).toContain('403');
    }
  });

  it("is made from the handlers' own schemas: records, request bodies, query parameters and Korean enums", async () => {
    const served = await body(env.call('GET', '/api/openapi.json'));
    const { $schema: _, ...queue } = z.toJSONSchema(ReviewQueue.schema, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
    expect(served.components.schemas.queue).toEqual(queue);
    const decision = served.paths['/api/submissions/{id}/decision'].post;
    expect(decision.requestBody.content['application/json'].schema.properties.decision.enum).toEqual(['승인', '보류', '반려']);
    expect(decision.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
    const status = served.paths['/api/evidence/{id}/status'].post.requestBody.content['application/json'].schema;
    expect(status.properties.status.enum).toEqual(['판단에 사용', '무관', '오탐', '보류']);
    const queueParameters = served.paths['/api/review-queue'].get.parameters.map((p: { name: string }) => p.name);
    expect(queueParameters).toEqual(['limit', 'offset', 'cursor', 'decision', 'level', 'enrichment', 'attention', 'people', 'q']);
    expect(served.components.schemas.Error.properties.error.properties.code.enum).toEqual(
      expect.arrayContaining(['invalid_request', 'unauthenticated', 'forbidden', 'not_found']),
    );
    expect(served.paths['/media/{path}'].get.responses['200'].content).toHaveProperty('application/octet-stream');
  });

  it('refuses two different answers under one name, so a schema name in the document means one shape', () => {
    const route = { method: 'get', access: 'operator', summary: 'a route' } as const;
    const one = answer('thing', z.object({ id: z.string() }));
    expect(() =>
      openApiDocument(
        [
          { ...route, path: '/a', answer: one },
          { ...route, path: '/b', answer: one },
        ],
        'test',
      ),
    ).not.toThrow();
    const other = answer('thing', z.object({ id: z.number() }));
    expect(() =>
      openApiDocument(
        [
          { ...route, path: '/a', answer: one },
          { ...route, path: '/b', answer: other },
        ],
        'test',
      ),
    ).toThrow(/two different answers are named thing/);
  });
});

describe('the check every test answer passes through', () => {
  const answer = (status: number, value: unknown) =>
    new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json; charset=utf-8' } });

  it('refuses an answer its route does not describe, and an error outside the error shape', async () => {
    await expect(checkAnswer('GET', '/api/review-queue', answer(200, { items: [], total: 0, next_cursor: null }))).resolves.toBeUndefined();
    await expect(checkAnswer('GET', '/api/review-queue?limit=5', answer(200, { items: [], total: '0', next_cursor: null }))).rejects.toThrow(/total/);
    await expect(checkAnswer('GET', '/api/review-queue', answer(200, { items: [], total: 0, next_cursor: null, extra: 1 }))).rejects.toThrow(
      /additional properties/,
    );
    await expect(checkAnswer('POST', '/api/tokens', answer(200, { token: {}, secret: 'x' }))).rejects.toThrow(/201/);
    await expect(checkAnswer('GET', '/api/submissions/x/review', answer(404, { error: { code: 'not_found', message: 'no' } }))).resolves.toBeUndefined();
    await expect(checkAnswer('GET', '/api/submissions/x/review', answer(404, { message: 'no' }))).rejects.toThrow(/Error/);
    await expect(checkAnswer('GET', '/api/submissions/x/review', answer(500, { error: { code: 'oops', message: 'no' } }))).rejects.toThrow(/Error/);
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(['Error', ...ROUTES.flatMap((r) => (r.answer ? [r.answer.name] : []))]));
  });
});
