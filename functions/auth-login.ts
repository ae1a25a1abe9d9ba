import { z } from 'zod';
import { login, Username, type NewSession } from '../lib/auth/accounts.js';
import { sessionCookie } from '../lib/auth/authenticate.js';
import { answer } from '../lib/api/answer.js';
import { AccountRecord, iso } from '../lib/api/records.js';
import { readBody } from '../lib/http/json.js';
import type { Env } from '../lib/ports.js';
import { type Handler, route } from './route.js';

export const LoginBody = z.object({ username: Username, password: z.string().min(1).max(200) }).strict();

/** A new session, from signing in or from the first-run setup. */
export const SignedIn = answer('signedIn', z.object({ account: AccountRecord, csrf_token: z.string(), expires_at: iso }));

/**
 * The handler of a route that opens a session from a username and password (signing in, the
 * first-run setup): reads the body, lets `open` start the session and hands it over, its account
 * and CSRF token in the answer and its secret in the cookie.
 */
export function sessionHandler<S extends z.ZodType<{ username: string; password: string }>>(
  Body: S,
  open: (env: Env, username: string, password: string) => Promise<NewSession>,
): Handler {
  return async (request, env) => {
    const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, Body);
    const session = await open(env, body.username, body.password);
    const response = SignedIn.send({ account: session.account, csrf_token: session.csrfToken, expires_at: session.expiresAt });
    response.headers.append('set-cookie', sessionCookie(request, session.secret, env.config.SVC_SESSION_HOURS * 3600));
    return response;
  };
}

/** POST /api/auth/login: a session cookie and the CSRF token to send with every change. */
export const handleLogin = sessionHandler(LoginBody, login);

export const loginRoute = route('post', '/api/auth/login', 'public', 'Sign in: sets the session cookie', {
  body: LoginBody,
  answer: SignedIn,
  handler: handleLogin,
});
