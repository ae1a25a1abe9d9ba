import { z } from 'zod';
import { Password, setupFirstAdmin, Username } from '../lib/auth/accounts.js';
import { sessionCookie } from '../lib/auth/authenticate.js';
import { readBody } from '../lib/http/json.js';
import type { Env } from '../lib/ports.js';
import { SignedIn } from './auth-login.js';
import type { RouteSpec } from './route.js';

/** The first administrator's body: the same rules as any account. */
export const SetupBody = z.object({ username: Username, password: Password }).strict();

/** POST /api/auth/setup: the first administrator of a fresh data folder, from a loopback address only. */
export async function handleSetup(request: Request, env: Env): Promise<Response> {
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, SetupBody);
  const session = await setupFirstAdmin(env, body.username, body.password);
  const response = SignedIn.send({ account: session.account, csrf_token: session.csrfToken, expires_at: session.expiresAt });
  response.headers.append('set-cookie', sessionCookie(request, session.secret, env.config.SVC_SESSION_HOURS * 3600));
  return response;
}

export const setupRoute: RouteSpec = {
  method: 'post',
  path: '/api/auth/setup',
  access: 'public',
  summary: 'Create the first administrator (loopback only, once)',
  body: SetupBody,
  answer: SignedIn,
  handler: handleSetup,
};
