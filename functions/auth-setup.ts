import { z } from 'zod';
import { Password, setupFirstAdmin, Username } from '../lib/auth/accounts.js';
import { readBody } from '../lib/http/json.js';
import type { Env } from '../lib/ports.js';
import { SignedIn, sendSession } from './auth-login.js';
import type { RouteSpec } from './route.js';

/** The first administrator's body: the same rules as any account. */
export const SetupBody = z.object({ username: Username, password: Password }).strict();

/** POST /api/auth/setup: the first administrator of a fresh data folder, from a loopback address only. */
export async function handleSetup(request: Request, env: Env): Promise<Response> {
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, SetupBody);
  return sendSession(request, env, await setupFirstAdmin(env, body.username, body.password));
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
