import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEnv } from '../../lib/env.js';
import { createLogger } from '../../lib/log.js';
import { recordProviderOutcome } from '../../lib/repo/providers.js';
import { createRouter } from '../../functions/router.js';
import { createTestEnv, TEST_ADMIN_TOKEN, type TestEnv } from '../helpers/env.js';
import { ProviderHealthRecord, ProviderRecord } from './contract.js';
import { body, refusal, seedSubmission, snapshot, webMatch } from './seed.js';

/** Distinctive secret values: none may appear in any answer. */
const SECRETS = {
  REGIONAL_CLIENT_ID: 'regional-id-7f3a9c',
  REGIONAL_CLIENT_SECRET: 'regional-secret-Qx81Lw',
  GLOBAL_VISION_API_KEY: 'vision-key-Zt55pQ0',
  GLOBAL_CUSTOM_SEARCH_API_KEY: 'search-key-Hh20vB9',
  GLOBAL_CUSTOM_SEARCH_CX: 'engine-cx-Mm48eR2',
};

let env: TestEnv;
beforeEach(async () => {
  env = await createTestEnv(SECRETS);
});
afterEach(async () => env.dispose());

const ALL = ['regional', 'global_vision', 'global_search', 'local_llm'];

describe('GET /api/providers', () => {
  it('answers {providers} with every provider in the contract shape, enabled when configured', async () => {
    const answer = await body(env.call('GET', '/api/providers'));
    expect(Object.keys(answer)).toEqual(['providers']);
    const providers = answer.providers.map((p: unknown) => ProviderRecord.parse(p));
    expect(providers.map((p: any) => p.id)).toEqual(ALL);
    expect(providers.find((p: any) => p.id === 'global_search')).toMatchObject({
      enabled: true,
      switched_on: true,
      configured: true,
      missing_env: [],
      reason: null,
      requiredEnv: ['GLOBAL_CUSTOM_SEARCH_API_KEY', 'GLOBAL_CUSTOM_SEARCH_CX'],
      daily_limit: 100,
      used_today: 0,
      remaining_today: 100,
    });
  });

  it('reports a provider without its keys as disabled with the missing names', async () => {
    const bare = await createTestEnv({ GLOBAL_CUSTOM_SEARCH_API_KEY: 'only-the-key-3kd9' });
    try {
      const { providers } = await body(bare.call('GET', '/api/providers'));
      const search = providers.find((p: any) => p.id === 'global_search');
      expect(search).toMatchObject({
        enabled: false,
        configured: false,
        missing_env: ['GLOBAL_CUSTOM_SEARCH_CX'],
        configuredEnv: expect.arrayContaining(['GLOBAL_CUSTOM_SEARCH_API_KEY']),
      });
      expect(search.reason).toContain('GLOBAL_CUSTOM_SEARCH_CX');
      expect(providers.find((p: any) => p.id === 'regional')).toMatchObject({ enabled: false, missing_env: ['REGIONAL_CLIENT_ID', 'REGIONAL_CLIENT_SECRET'] });
    } finally {
      await bare.dispose();
    }
  });
});

describe('GET /api/providers/health', () => {
  it('answers {status, providers} with last outcomes and variable names only', async () => {
    const answer = await body(env.call('GET', '/api/providers/health'));
    expect(Object.keys(answer).sort()).toEqual(['providers', 'status']);
    expect(answer.status).toBe('ok');
    const providers = answer.providers.map((p: unknown) => ProviderHealthRecord.parse(p));
    expect(providers.map((p: any) => p.id)).toEqual(ALL);
    const regional = providers.find((p: any) => p.id === 'regional');
    expect(regional.requiredEnv).toEqual(['REGIONAL_CLIENT_ID', 'REGIONAL_CLIENT_SECRET']);
    expect(regional.configuredEnv).toEqual(expect.arrayContaining(['REGIONAL_CLIENT_ID', 'REGIONAL_CLIENT_SECRET']));
  });

  it('is degraded while an enabled provider last failed, ok again after a success', async () => {
    await recordProviderOutcome(env.db, 'regional', { ok: false, error: 'HTTP 500 from the provider' }, '2026-11-21T02:00:00.000Z');
    let answer = await body(env.call('GET', '/api/providers/health'));
    expect(answer.status).toBe('degraded');
    expect(answer.providers.find((p: any) => p.id === 'regional')).toMatchObject({
      last_failure_at: '2026-11-21T02:00:00.000Z',
      last_error: 'HTTP 500 from the provider',
      last_success_at: null,
    });
    await recordProviderOutcome(env.db, 'regional', { ok: true }, '2026-11-21T02:05:00.000Z');
    answer = await body(env.call('GET', '/api/providers/health'));
    expect(answer.status).toBe('ok');
  });

  it('is disabled when no provider may be used', async () => {
    await body(env.call('POST', '/api/providers/emergency-disable'));
    expect((await body(env.call('GET', '/api/providers/health'))).status).toBe('disabled');
  });
});

describe('POST /api/providers/emergency-disable', () => {
  it('switches every provider off at once, marked emergency, and answers {disabled, providers}', async () => {
    await body(env.call('PATCH', '/api/providers/local_llm', { enabled: false }));
    const answer = await body(env.call('POST', '/api/providers/emergency-disable'));
    expect(Object.keys(answer).sort()).toEqual(['disabled', 'providers']);
    expect(answer.disabled).toEqual(ALL);
    for (const p of answer.providers) {
      expect(ProviderRecord.parse(p)).toMatchObject({ enabled: false, switched_on: false, reason: 'emergency disable' });
    }
    const rows = (await env.db.prepare('SELECT id, switched_on, switched_off_by FROM providers ORDER BY id').all()).results;
    expect(rows).toEqual(
      ALL.slice()
        .sort()
        .map((id) => ({ id, switched_on: 0, switched_off_by: 'emergency' })),
    );
    const { events } = await body(env.call('GET', '/api/audit-events'));
    expect(events[0]).toMatchObject({
      action: 'provider.emergency_disable',
      target_type: 'provider',
      target_id: null,
      details: { disabled: ALL, previously_switched_on: ['global_search', 'global_vision', 'regional'] },
    });
  });

  it('stays off across a restart until an operator switches a provider on again', async () => {
    await body(env.call('POST', '/api/providers/emergency-disable'));
    await env.close();
    const restarted = await createEnv(env.config, { clock: env.clock, log: createLogger(env.config, { silent: true }) });
    try {
      const router = createRouter();
      const call = (method: string, path: string, sent?: unknown) =>
        router.fetch(
          new Request(`http://127.0.0.1${path}`, {
            method,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
            body: sent === undefined ? undefined : JSON.stringify(sent),
          }) as never,
          restarted,
        );
      expect((await body(call('GET', '/api/providers'))).providers.every((p: any) => p.reason === 'emergency disable')).toBe(true);
      await body(call('PATCH', '/api/providers/regional', { enabled: true }));
      const { providers } = await body(call('GET', '/api/providers'));
      expect(providers.find((p: any) => p.id === 'regional')).toMatchObject({ enabled: true, reason: null });
      expect(providers.find((p: any) => p.id === 'global_vision')).toMatchObject({ enabled: false, reason: 'emergency disable' });
    } finally {
      await restarted.close();
    }
  });
});

describe('PATCH /api/providers/{id} bad input', () => {
  it('refuses a non-boolean enabled with 400 and an unknown id with 404, changing nothing', async () => {
    const before = await snapshot(env.db);
    for (const sent of [{ enabled: 'false' }, { enabled: 0 }, { enabled: null }, {}]) {
      await refusal(env.call('PATCH', '/api/providers/regional', sent), 400, 'invalid_request');
    }
    await refusal(env.call('PATCH', '/api/providers/nobody', { enabled: false }), 404, 'not_found');
    expect(await snapshot(env.db)).toEqual(before);
  });
});

describe('secrets', () => {
  it('no configured secret value appears in any answer of the review and admin API', async () => {
    const [match] = await seedSubmission(env, 's1', { evidence: [webMatch()] });
    await recordProviderOutcome(env.db, 'global_vision', { ok: false, error: 'quota exceeded' }, '2026-11-21T02:00:00.000Z');
    const calls: [string, string, unknown?][] = [
      ['GET', '/api/bootstrap'],
      ['GET', '/api/providers'],
      ['GET', '/api/providers/health'],
      ['PATCH', '/api/providers/regional', { enabled: false }],
      ['POST', '/api/providers/emergency-disable'],
      ['GET', '/api/review-queue'],
      ['GET', '/api/submissions/s1/review'],
      ['POST', `/api/evidence/${match.id}/status`, { status: '판단에 사용' }],
      ['POST', '/api/submissions/s1/decision', { decision: '보류' }],
      ['GET', '/api/knowledge'],
      ['POST', '/api/retention/run'],
      ['GET', '/api/audit-events'],
      ['GET', '/api/audit-events?limit=nope'],
      ['POST', '/api/evidence/none/status', { status: '무관' }],
    ];
    for (const [method, path, sent] of calls) {
      const text = await (await env.call(method, path, sent)).text();
      for (const [name, value] of Object.entries(SECRETS)) {
        expect(text, `${method} ${path} shows ${name}`).not.toContain(value);
      }
    }
    // The names are shown, so the check above is looking at real provider answers.
    expect(await (await env.call('GET', '/api/providers/health')).text()).toContain('GLOBAL_CUSTOM_SEARCH_CX');
  });
});
