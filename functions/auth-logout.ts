import { z } from 'zod';
import { logout } from '../lib/auth/accounts.js';
import { readCookie, SESSION_COOKIE, sessionCookie } from '../lib/auth/authenticate.js';
import { answer } from '../lib/api/answer.js';
import { readJson } from '../lib/http/json.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const SignedOut = answer('signedOut', z.object({ signed_out: z.literal(true) }));

/** POST /api/auth/logout: the session ends on the server, and the cookie is cleared. */
export async function handleLogout(request: Request, env: Env): Promise<Response> {
  await readJson(request, env.config.SVC_MAX_BODY_BYTES);
  await logout(env, readCookie(request, SESSION_COOKIE));
  const response = SignedOut.send({ signed_out: true });
  response.headers.append('set-cookie', sessionCookie(request, null, 0));
  return response;
}

export const logoutRoute = route('post', '/api/auth/logout', 'operator', 'Sign out: ends the session', { answer: SignedOut, handler: handleLogout });
