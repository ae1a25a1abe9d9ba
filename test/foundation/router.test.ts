import { describe, expect, it } from 'vitest';
import { handleHealth } from '../../functions/health.js';
import { useTestEnv } from '../helpers/env.js';

const env = useTestEnv();

describe('health and errors through the router, with no server', () => {
  it('calls a handler function itself with a plain Request and the test env', async () => {
    const res = await handleHealth(new Request('http://127.0.0.1/health'), env);
    expect(await res.json()).toMatchObject({ status: 'ok', db: 'ok' });
  });

  it('answers /health with the database state', async () => {
    const res = await env.call('GET', '/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', db: 'ok', version: '0.1.0' });
  });

  it('reports degraded with 503 when the database is closed', async () => {
    env.db.close();
    const res = await env.call('GET', '/health');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'degraded' });
  });

  it('gives a JSON 404 for an unknown route', async () => {
    const res = await env.call('GET', '/api/nothing-here');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: 'no route for GET /api/nothing-here' } });
  });
});
