import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROUTES } from '../../functions/index.js';
import { createRouter } from '../../functions/router.js';
import { createTestEnv, TEST_ADMIN_TOKEN, type TestEnv } from '../helpers/env.js';

let env: TestEnv;
beforeEach(async () => {
  env = await createTestEnv();
});
afterEach(async () => env.dispose());

const OPERATOR = { username: 'operator-lee', password: 'staple battery horse', role: 'operator' };
const ADMIN = { username: 'admin-kim', password: 'correct horse battery', role: 'admin' };
const NOBODY = { authorization: '' };

async function makeAccount(account: typeof OPERATOR) {
  const res = await env.call('POST', '/api/accounts', account);
  expect(res.status).toBe(201);
  return (await res.json()).account;
}

async function tokenFor(role: 'operator' | 'admin') {
  const res = await env.call('POST', '/api/tokens', { name: `${role} script`, role });
  expect(res.status).toBe(201);
  return (await res.json()) as { token: { id: string }; secret: string };
}

/** Signs in as the browser does; gives the cookie and the CSRF token to send back. */
async function signIn(account: { username: string; password: string }, headers: Record<string, string> = {}) {
  const res = await env.call('POST', '/api/auth/login', { username: account.username, password: account.password }, { ...NOBODY, ...headers });
  const cookie = res.headers.get('set-cookie');
  const body = await res.json();
  return { res, body, cookie, session: cookie ? { ...NOBODY, cookie: cookie.split(';')[0] } : null };
}

const errorCode = async (res: Response) => ((await res.json()) as { error?: { code: string } }).error?.code;

describe('every route and its role', () => {
  const sample = (path: string) => path.replace(/:id/g, 'x').replace('/*', '/images/x.png');

  it('refuses anonymous callers on every route but /health and the sign-in ones, with 401', async () => {
    for (const route of ROUTES) {
      const res = await env.call(route.method.toUpperCase(), sample(route.path), route.method === 'get' ? undefined : {}, NOBODY);
      if (route.access === 'public') expect(res.status, `${route.method} ${route.path}`).not.toBe(401);
      else {
        expect(res.status, `${route.method} ${route.path}`).toBe(401);
        expect(await errorCode(res)).toBe('unauthenticated');
      }
    }
  });

  it('lets an operator read and review but refuses every admin route with 403', async () => {
    const { secret } = await tokenFor('operator');
    const asOperator = { authorization: `Bearer ${secret}` };
    for (const route of ROUTES.filter((r) => r.access !== 'public')) {
      const res = await env.call(route.method.toUpperCase(), sample(route.path), route.method === 'get' ? undefined : {}, asOperator);
      if (route.access === 'admin') {
        expect(res.status, `${route.method} ${route.path}`).toBe(403);
        expect(await errorCode(res)).toBe('forbidden');
      } else expect([401, 403], `${route.method} ${route.path}`).not.toContain(res.status);
    }
  });

  it('lets an admin call every route', async () => {
    const { secret } = await tokenFor('admin');
    for (const route of ROUTES.filter((r) => r.path !== '/api/auth/logout')) {
      const res = await env.call(route.method.toUpperCase(), sample(route.path), route.method === 'get' ? undefined : {}, {
        authorization: `Bearer ${secret}`,
      });
      expect([401, 403], `${route.method} ${route.path}`).not.toContain(res.status);
    }
  });

  it('refuses a bearer token that is wrong or malformed instead of treating the caller as anonymous', async () => {
    for (const authorization of ['Bearer nope', 'Basic dXNlcjpwYXNz', `Bearer ${TEST_ADMIN_TOKEN}x`]) {
      const res = await env.call('GET', '/health', undefined, { authorization });
      expect(res.status).toBe(401);
    }
  });

  it('calls a handler directly without any login, as the service', async () => {
    const { handleProvidersList } = await import('../../functions/providers-list.js');
    const res = await handleProvidersList(new Request('http://127.0.0.1/api/providers'), env);
    expect(res.status).toBe(200);
  });
});

describe('sessions', () => {
  it('signs in with an HttpOnly, SameSite=Strict cookie (Secure behind https) and signs out for good', async () => {
    await makeAccount(OPERATOR);
    const plain = await signIn(OPERATOR);
    expect(plain.res.status).toBe(200);
    expect(plain.cookie).toMatch(/^svc_session=sess_[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    expect(plain.body).toMatchObject({ account: { username: 'operator-lee', role: 'operator' }, csrf_token: expect.stringMatching(/^csrf_/) });
    expect(JSON.stringify(plain.body)).not.toContain('password');
    const secure = await signIn(OPERATOR, { 'x-forwarded-proto': 'https' });
    expect(secure.cookie).toMatch(/; Secure$/);

    const me = await (await env.call('GET', '/api/auth/session', undefined, plain.session!)).json();
    expect(me).toMatchObject({ signed_in: true, actor: { type: 'account', name: 'operator-lee', role: 'operator' }, csrf_token: plain.body.csrf_token });
    expect((await env.call('GET', '/api/review-queue', undefined, plain.session!)).status).toBe(200);

    const out = await env.call('POST', '/api/auth/logout', undefined, { ...plain.session!, 'x-csrf-token': plain.body.csrf_token });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^svc_session=; .*Max-Age=0/);
    expect((await env.call('GET', '/api/review-queue', undefined, plain.session!)).status).toBe(401);
    // The other session of the same account is still live: signing out ends one browser only.
    expect((await env.call('GET', '/api/review-queue', undefined, secure.session!)).status).toBe(200);
  });

  it('refuses a change sent with the cookie but without the CSRF token, or from another site', async () => {
    await makeAccount(OPERATOR);
    const { session, body } = await signIn(OPERATOR);
    const change = (headers: Record<string, string>) => env.call('POST', '/api/submissions/reload', undefined, { ...session!, ...headers });
    const missing = await change({});
    expect(missing.status).toBe(403);
    expect(await errorCode(missing)).toBe('forbidden');
    expect((await change({ 'x-csrf-token': 'csrf_guess' })).status).toBe(403);
    expect((await change({ 'x-csrf-token': body.csrf_token, origin: 'https://evil.example' })).status).toBe(403);
    expect((await change({ 'x-csrf-token': body.csrf_token, origin: 'http://127.0.0.1' })).status).toBe(200);
    // Reads need no CSRF token; nothing was reloaded by the refused attempts.
    const events = (await (await env.call('GET', '/api/audit-events')).json()).events;
    expect(events.filter((e: { action: string }) => e.action === 'submission.reload')).toHaveLength(1);
  });

  it('expires a session after SVC_SESSION_HOURS', async () => {
    await env.dispose();
    env = await createTestEnv({ SVC_SESSION_HOURS: '2' });
    await makeAccount(OPERATOR);
    const { session } = await signIn(OPERATOR);
    env.clock.advance(2 * 3600_000 - 1000);
    expect((await env.call('GET', '/api/bootstrap', undefined, session!)).status).toBe(200);
    env.clock.advance(2000);
    expect((await env.call('GET', '/api/bootstrap', undefined, session!)).status).toBe(401);
  });

  it('slows and then locks repeated wrong passwords, with one answer that never says which part was wrong', async () => {
    await makeAccount(OPERATOR);
    const answers = new Set<string>();
    const started = Date.now();
    for (let i = 0; i < 5; i++) {
      const { res, body } = await signIn({ username: OPERATOR.username, password: `wrong-${i}` });
      expect(res.status).toBe(401);
      answers.add(body.error.message);
    }
    // 100 + 200 + 400 + 800 + 1600 ms of added delay.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    const unknown = await signIn({ username: 'nobody-here', password: 'whatever-it-is' });
    answers.add(unknown.body.error.message);
    const locked = await signIn(OPERATOR);
    expect(locked.res.status).toBe(401);
    answers.add(locked.body.error.message);
    expect(answers.size).toBe(1);
    env.clock.advance(15 * 60_000 + 1000);
    expect((await signIn(OPERATOR)).res.status).toBe(200);
    const events = (await (await env.call('GET', '/api/audit-events')).json()).events as { action: string; details: Record<string, unknown> }[];
    expect(events.map((e) => e.action).filter((a) => a.startsWith('auth.'))).toEqual([
      'auth.login',
      'auth.login_failed',
      'auth.login_failed',
      'auth.locked',
      'auth.login_failed',
      'auth.login_failed',
      'auth.login_failed',
      'auth.login_failed',
      'auth.login_failed',
    ]);
    expect(events.filter((e) => e.action === 'auth.login_failed').map((e) => e.details.reason)).toEqual([
      'locked',
      'unknown username',
      'wrong password',
      'wrong password',
      'wrong password',
      'wrong password',
      'wrong password',
    ]);
    expect(JSON.stringify(events)).not.toMatch(/wrong-\d|staple battery|nobody-here/);
  });

  it('ends every session of an account that is disabled, demoted or given a new password', async () => {
    const operator = await makeAccount(OPERATOR);
    for (const change of [{ disabled: true }, { role: 'admin' }, { password: 'a brand new passphrase' }]) {
      await env.call('PATCH', `/api/accounts/${operator.id}`, { disabled: false });
      const { session } = await signIn({ username: OPERATOR.username, password: 'a brand new passphrase' }).then((r) => (r.session ? r : signIn(OPERATOR)));
      expect((await env.call('GET', '/api/bootstrap', undefined, session!)).status).toBe(200);
      const res = await env.call('PATCH', `/api/accounts/${operator.id}`, change);
      expect(res.status).toBe(200);
      expect((await env.call('GET', '/api/bootstrap', undefined, session!)).status).toBe(401);
    }
  });
});

describe('first run and tokens', () => {
  const fromAddress = (address: string) => ({ req: { socket: { remoteAddress: address } } });
  const setup = (address: string, account = ADMIN) =>
    createRouter().fetch(
      new Request('http://127.0.0.1/api/auth/setup', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: account.username, password: account.password }),
      }),
      env,
      fromAddress(address),
    );

  it('creates the first administrator from a loopback address only, and only once', async () => {
    const remote = await setup('192.168.1.20');
    expect(remote.status).toBe(403);
    const session = await (await createRouter().fetch(new Request('http://127.0.0.1/api/auth/session'), env, fromAddress('10.0.0.5'))).json();
    expect(session).toMatchObject({ signed_in: false, setup_required: true, setup_allowed: false });
    const local = await setup('127.0.0.1');
    expect(local.status).toBe(200);
    expect(local.headers.get('set-cookie')).toMatch(/^svc_session=sess_/);
    expect((await local.json()).account).toMatchObject({ username: 'admin-kim', role: 'admin' });
    const again = await setup('::1', { ...ADMIN, username: 'second-admin' });
    expect(again.status).toBe(409);
    expect(await (await env.call('GET', '/api/auth/session', undefined, NOBODY)).json()).toMatchObject({ setup_required: false, setup_allowed: false });
  });

  it('shows a token secret once, stores only its hash, and stops it at once when revoked', async () => {
    const { token, secret } = await tokenFor('operator');
    expect(secret).toMatch(/^svc_[\w-]{43}$/);
    const listed = await (await env.call('GET', '/api/tokens')).json();
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(JSON.stringify(await env.db.prepare('SELECT * FROM api_tokens').all())).not.toContain(secret);
    const asToken = { authorization: `Bearer ${secret}` };
    expect((await env.call('GET', '/api/review-queue', undefined, asToken)).status).toBe(200);
    expect(listed.tokens[0]).toMatchObject({ id: token.id, role: 'operator', revoked_at: null });
    expect((await env.call('POST', `/api/tokens/${token.id}/revoke`)).status).toBe(200);
    expect((await env.call('GET', '/api/review-queue', undefined, asToken)).status).toBe(401);
  });

  it("shows a token's last use to the minute, without a write for every request", async () => {
    const { token, secret } = await tokenFor('operator');
    const asToken = { authorization: `Bearer ${secret}` };
    const lastUse = async () => (await (await env.call('GET', '/api/tokens')).json()).tokens.find((t: { id: string }) => t.id === token.id).last_used_at;
    expect(await lastUse()).toBeNull();
    const first = env.clock.now().toISOString();
    expect((await env.call('GET', '/api/review-queue', undefined, asToken)).status).toBe(200);
    expect(await lastUse()).toBe(first);
    env.clock.advance(45_000);
    expect((await env.call('GET', '/api/review-queue', undefined, asToken)).status).toBe(200);
    expect(await lastUse()).toBe(first);
    env.clock.advance(20_000);
    expect((await env.call('GET', '/api/review-queue', undefined, asToken)).status).toBe(200);
    expect(await lastUse()).toBe(env.clock.now().toISOString());
  });

  it('audits who did what from where, and keeps every secret out of answers and audit events', async () => {
    await makeAccount(OPERATOR);
    const { secret } = await tokenFor('operator');
    const { session, body, cookie } = await signIn(OPERATOR);
    await env.call('POST', '/api/submissions/reload', undefined, { ...session!, 'x-csrf-token': body.csrf_token });
    await env.call('POST', '/api/submissions/reload', undefined, { authorization: `Bearer ${secret}` });
    const events = (await (await env.call('GET', '/api/audit-events')).json()).events as { action: string; actor: Record<string, unknown> }[];
    const reloads = events.filter((e) => e.action === 'submission.reload');
    expect(reloads.map((e) => e.actor)).toEqual([
      { type: 'token', id: expect.stringMatching(/^tok_/), name: 'operator script', role: 'operator', client: null },
      { type: 'account', id: expect.stringMatching(/^acct_/), name: 'operator-lee', role: 'operator', client: null },
    ]);
    expect(events.map((e) => e.action)).toEqual(expect.arrayContaining(['account.create', 'token.create', 'auth.login']));
    const everything = JSON.stringify(events) + JSON.stringify(await (await env.call('GET', '/api/bootstrap')).json());
    for (const hidden of [OPERATOR.password, secret, cookie!.split(';')[0].split('=')[1], body.csrf_token, TEST_ADMIN_TOKEN])
      expect(everything).not.toContain(hidden);
  });

  it('the audit log cannot be changed, not even by a direct statement', async () => {
    await makeAccount(OPERATOR);
    await expect(env.db.prepare('UPDATE audit_events SET action = ?').bind('x').run()).rejects.toThrow(/append-only/);
    await expect(env.db.prepare('DELETE FROM audit_events').run()).rejects.toThrow(/append-only/);
    const routes = ROUTES.filter((r) => r.path.startsWith('/api/audit-events'));
    expect(routes.map((r) => r.method)).toEqual(['get']);
  });
});
