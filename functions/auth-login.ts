import { z } from 'zod';
import { login, Username, type NewSession } from '../lib/auth/accounts.js';
import { sessionCookie } from '../lib/auth/authenticate.js';
import { answer } from '../lib/api/answer.js';
import { AccountRecord, iso } from '../lib/api/records.js';
import { readBody } from '../lib/http/json.js';
import type { Env } from '../lib/ports.js';
import type { RouteSpec } from './route.js';

export const LoginBody = z.object({ username: Username, password: z.string().min(1).max(200) }).strict();

/** A new session, from signing in or from the first-run setup. */
export const SignedIn = answer('signedIn', z.object({ account: AccountRecord, csrf_token: z.string(), expires_at: iso }));

/** The answer that hands over a new session: its account and CSRF token, and its cookie. */
export function sendSession(request: Request, env: Env, session: NewSession): Response {
  const response = SignedIn.send({ account: session.account, csrf_token: session.csrfToken, expires_at: session.expiresAt });
  response.headers.append('set-cookie', sessionCookie(request, session.secret, env.config.SVC_SESSION_HOURS * 3600));
  return response;
}

/** POST /api/auth/login: a session cookie and the CSRF token to send with every change. */
export async function handleLogin(request: Request, env: Env): Promise<Response> {
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, LoginBody);
  return sendSession(request, env, await login(env, body.username, body.password));
}

export const loginRoute: RouteSpec = {
  method: 'post',
  path: '/api/auth/login',
  access: 'public',
  summary: 'Sign in: sets the session cookie',
  body: LoginBody,
  answer: SignedIn,
  handler: handleLogin,
};
