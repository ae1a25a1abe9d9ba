import { z } from 'zod';
import { issueToken, RoleSchema, withdrawToken } from '../lib/auth/accounts.js';
import { answer } from '../lib/api/answer.js';
import { ApiTokenRecord } from '../lib/api/records.js';
import { listApiTokens } from '../lib/repo/accounts.js';
import type { Env } from '../lib/ports.js';
import { creationRoute, recordChangeHandler, route } from './route.js';

export const NewTokenBody = z.object({ name: z.string().trim().min(1).max(100), role: RoleSchema }).strict();

const Tokens = answer('tokens', z.object({ tokens: z.array(ApiTokenRecord) }));
const NewToken = answer('newToken', z.object({ token: ApiTokenRecord, secret: z.string() }));
const Token = answer('token', z.object({ token: ApiTokenRecord }));

/** GET /api/tokens (admin): personal API tokens, never their secrets. */
export async function handleTokensList(_request: Request, env: Env): Promise<Response> {
  return Tokens.send({ tokens: await listApiTokens(env.db) });
}

/** POST /api/tokens/{id}/revoke (admin): the token stops working at once. */
export const handleTokenRevoke = recordChangeHandler('token', z.unknown(), Token, async (env, id) => ({ token: await withdrawToken(env, id) }));

export const tokensListRoute = route('get', '/api/tokens', 'admin', 'Personal API tokens (never their secrets)', { answer: Tokens, handler: handleTokensList });

/** POST /api/tokens (admin): a new token; `secret` is in this answer only and is never shown again. */
export const tokenCreateRoute = creationRoute('/api/tokens', 'admin', 'Create a token: its secret is in this answer only', NewTokenBody, NewToken, issueToken);

export const tokenRevokeRoute = route('post', '/api/tokens/:id/revoke', 'admin', 'Revoke a token', { answer: Token, handler: handleTokenRevoke });
