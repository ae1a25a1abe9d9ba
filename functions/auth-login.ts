import { z } from 'zod';
import { Password, login, Username } from '../lib/auth/accounts.js';
import { sessionCookie } from '../lib/auth/authenticate.js';
import { json, readBody } from '../lib/http/json.js';
import type { Env } from '../lib/ports.js';

export const LoginBody = z.object({ username: Username, password: z.string().min(1).max(200) }).strict();

/** POST /api/auth/login: a session cookie and the CSRF token to send with every change. */
export async function handleLogin(request: Request, env: Env): Promise<Response> {
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, LoginBody);
  const session = await login(env, body.username, body.password);
  const response = json({ account: session.account, csrf_token: session.csrfToken, expires_at: session.expiresAt });
  response.headers.append('set-cookie', sessionCookie(request, session.secret, env.config.SVC_SESSION_HOURS * 3600));
  return response;
}

/** The first administrator's body: the same rules as any account. */
export const SetupBody = z.object({ username: Username, password: Password }).strict();
