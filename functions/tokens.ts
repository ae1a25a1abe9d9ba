import { z } from 'zod';
import { issueToken, RoleSchema, withdrawToken } from '../lib/auth/accounts.js';
import { json, readBody, readJson } from '../lib/http/json.js';
import { listApiTokens } from '../lib/repo/accounts.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import type { Env } from '../lib/ports.js';

export const NewTokenBody = z.object({ name: z.string().trim().min(1).max(100), role: RoleSchema }).strict();

/** GET /api/tokens (admin): personal API tokens, never their secrets. */
export async function handleTokensList(_request: Request, env: Env): Promise<Response> {
  return json({ tokens: await listApiTokens(env.db) });
}

/** POST /api/tokens (admin): a new token; `secret` is in this answer only and is never shown again. */
export async function handleTokenCreate(request: Request, env: Env): Promise<Response> {
  const body = await readBody(request, env.config.SVC_MAX_BODY_BYTES, NewTokenBody);
  const { token, secret } = await issueToken(env, body);
  return json({ token, secret }, 201);
}

/** POST /api/tokens/{id}/revoke (admin): the token stops working at once. */
export async function handleTokenRevoke(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'token');
  await readJson(request, env.config.SVC_MAX_BODY_BYTES);
  return json({ token: await withdrawToken(env, id) });
}
