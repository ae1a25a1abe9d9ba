import { setupFirstAdmin } from '../lib/auth/accounts.js';
import { sessionCookie } from '../lib/auth/authenticate.js';
import { json, readBody } from '../lib/http/json.js';
import { SetupBody } from './auth-login.js';
import type { Env } from '../lib/ports.js';

/** POST /api/auth/setup: the first administrator of a fresh data folder, from a loopback address only. */
export async function handleSetup(request: Request, env: Env): Promise<Response> {
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, SetupBody);
  const session = await setupFirstAdmin(env, body.username, body.password);
  const response = json({ account: session.account, csrf_token: session.csrfToken, expires_at: session.expiresAt });
  response.headers.append('set-cookie', sessionCookie(request, session.secret, env.config.SVC_SESSION_HOURS * 3600));
  return response;
}
