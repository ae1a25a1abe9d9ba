import { afterEach, describe, expect, it } from 'vitest';
import { createRouter } from '../../functions/router.js';
import { RULES } from '../../lib/config.js';
import { createRateLimiter } from '../../lib/http/rate-limit.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';

/**
 * Rate limits per caller: a personal token, an account's session, an address before sign-in. Small
 * limits make the tests short; the test clock stands still until a test moves it.
 */
const SMALL = {
  SVC_RATE_LIMIT_PER_SECOND: '2',
  SVC_RATE_LIMIT_BURST: '5',
  SVC_RATE_LIMIT_ANONYMOUS_PER_SECOND: '1',
  SVC_RATE_LIMIT_ANONYMOUS_BURST: '3',
};
const DEFAULTS = Object.fromEntries(
  (['SVC_RATE_LIMIT_PER_SECOND', 'SVC_RATE_LIMIT_BURST', 'SVC_RATE_LIMIT_ANONYMOUS_PER_SECOND', 'SVC_RATE_LIMIT_ANONYMOUS_BURST'] as const).map((name) => [
    name,
    String(RULES[name].def),
  ]),
);
const NOBODY = { authorization: '' };
const OPERATOR = { username: 'operator-lee', password: 'staple battery horse', role: 'operator' };

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function tokenFor(role: 'operator' | 'admin') {
  const res = await env!.call('POST', '/api/tokens', { name: `${role} script`, role });
  expect(res.status).toBe(201);
  return (await res.json()) as { token: { id: string }; secret: string };
}

async function sessionOf(account: typeof OPERATOR) {
  expect((await env!.call('POST', '/api/accounts', account)).status).toBe(201);
  const res = await env!.call('POST', '/api/auth/login', { username: account.username, password: account.password }, NOBODY);
  expect(res.status).toBe(200);
  return { ...NOBODY, cookie: res.headers.get('set-cookie')!.split(';')[0] };
}

const statuses = async (n: number, send: () => Promise<Response>) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send()).status);
  return out;
};

async function expectLimited(res: Response, per: string) {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  const body = await res.json();
  expect(body.error.code).toBe('rate_limited');
  expect(body.error.message).toContain(`per ${per}`);
  return retryAfter;
}

const limitedEvents = async () =>
  ((await (await env!.call('GET', '/api/audit-events')).json()).events as { action: string; target_type: string; target_id: string | null }[]).filter(
    (e) => e.action === 'caller.rate_limited',
  );

describe('each caller kind meets its limit, with 429 and Retry-After, and passes again after it', () => {
  it('a personal API token', async () => {
    env = await createTestEnv(SMALL);
    const { secret } = await tokenFor('operator');
    const asToken = () => env!.call('GET', '/api/review-queue', undefined, { authorization: `Bearer ${secret}` });
    expect(await statuses(5, asToken)).toEqual([200, 200, 200, 200, 200]);
    const retryAfter = await expectLimited(await asToken(), 'token');
    // Another caller is not held up by this one.
    expect((await env.call('GET', '/api/review-queue')).status).toBe(200);
    env.clock.advance(retryAfter * 1000);
    expect((await asToken()).status).toBe(200);
  });

  it("an account's session", async () => {
    env = await createTestEnv(SMALL);
    const session = await sessionOf(OPERATOR);
    const asSession = () => env!.call('GET', '/api/bootstrap', undefined, session);
    expect(await statuses(5, asSession)).toEqual([200, 200, 200, 200, 200]);
    const retryAfter = await expectLimited(await asSession(), 'account');
    env.clock.advance(retryAfter * 1000);
    expect((await asSession()).status).toBe(200);
  });

  it('an address before sign-in, wrong tokens included, one address apart from another', async () => {
    env = await createTestEnv(SMALL);
    const router = createRouter();
    const from = (address: string, headers: Record<string, string> = {}) =>
      router.fetch(new Request('http://127.0.0.1/api/auth/session', { headers }), env!, { clientAddress: address });
    expect(await statuses(2, () => from('10.0.0.5'))).toEqual([200, 200]);
    // Guessing tokens counts against the address: a wrong token is refused, then limited.
    expect((await from('10.0.0.5', { authorization: 'Bearer guessed-1' })).status).toBe(401);
    const retryAfter = await expectLimited(await from('10.0.0.5', { authorization: 'Bearer guessed-2' }), 'address before sign-in');
    await expectLimited(await from('10.0.0.5'), 'address before sign-in');
    expect((await from('10.0.0.6')).status).toBe(200);
    env.clock.advance(retryAfter * 1000);
    expect((await from('10.0.0.5')).status).toBe(200);
  });
});

describe('what is recorded', () => {
  it('audits a limited token once per episode of hammering, never with its secret', async () => {
    env = await createTestEnv(SMALL);
    const { token, secret } = await tokenFor('admin');
    const asToken = () => env!.call('GET', '/api/jobs', undefined, { authorization: `Bearer ${secret}` });
    const first = await statuses(30, asToken);
    expect(first.filter((s) => s === 429)).toHaveLength(25);
    // A script that waits as told and hammers on is still the same episode.
    env.clock.advance(1000);
    await statuses(10, asToken);
    let events = await limitedEvents();
    expect(events).toEqual([expect.objectContaining({ target_type: 'token', target_id: token.id })]);
    const audit = await (await env.call('GET', '/api/audit-events')).text();
    expect(audit).not.toContain(secret);
    // Quiet long enough for its bucket to fill again: the next hammering is a new episode.
    env.clock.advance(60_000);
    await statuses(10, asToken);
    events = await limitedEvents();
    expect(events).toHaveLength(2);
  });

  it('does not audit an address (only accounts and tokens are audited)', async () => {
    env = await createTestEnv(SMALL);
    await statuses(10, () => env!.call('GET', '/api/auth/session', undefined, NOBODY));
    expect(await limitedEvents()).toEqual([]);
  });
});

describe('what is never limited', () => {
  it('the health check and the console files, whoever asks and however often', async () => {
    env = await createTestEnv(SMALL);
    for (const path of ['/health', '/', '/app.js', '/style.css']) {
      const seen = await statuses(20, () => env!.call('GET', path, undefined, NOBODY));
      expect(new Set(seen), path).toEqual(new Set([200]));
    }
  });

  it("a reviewer's page loads with the default limits: the console's requests twice over at once, a page of 100 thumbnails each", async () => {
    env = await createTestEnv(DEFAULTS);
    const session = await sessionOf(OPERATOR);
    const pageLoad = () => [
      '/api/auth/session',
      '/api/bootstrap',
      '/api/review-queue?limit=100',
      '/api/jobs/progress',
      ...Array.from({ length: 100 }, (_, i) => `/media/thumbs/s${i}.jpg`),
    ];
    const answers = await Promise.all([...pageLoad(), ...pageLoad()].map((path) => env!.call('GET', path, undefined, session)));
    expect(answers.filter((r) => r.status === 429)).toHaveLength(0);
    // The queue polls its progress every second: a minute of that stays far under the refill.
    for (let i = 0; i < 60; i++) {
      env.clock.advance(1000);
      expect((await env.call('GET', '/api/jobs/progress', undefined, session)).status).toBe(200);
    }
  });

  it('while a script hammering with the default limits meets them', async () => {
    env = await createTestEnv(DEFAULTS);
    const { secret } = await tokenFor('operator');
    const answers = await Promise.all(Array.from({ length: 400 }, () => env!.call('GET', '/api/jobs', undefined, { authorization: `Bearer ${secret}` })));
    expect(answers.filter((r) => r.status === 429).length).toBe(400 - RULES.SVC_RATE_LIMIT_BURST.def);
  });
});

describe('the limiter', () => {
  it('keeps at most its bound of callers however many distinct ones come', () => {
    const limiter = createRateLimiter(100);
    for (let i = 0; i < 5000; i++) limiter.take(`address:10.0.${i >> 8}.${i & 255}`, { perSecond: 1, burst: 1 }, 0);
    expect(limiter.size).toBe(100);
  });

  it('lets everything pass when its rate is 0 (switched off)', () => {
    const limiter = createRateLimiter(10);
    for (let i = 0; i < 100; i++) expect(limiter.take('token:t', { perSecond: 0, burst: 1 }, 0).allowed).toBe(true);
  });
});
