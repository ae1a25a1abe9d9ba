import { z } from 'zod';
import { addAccount, changeAccount, endAccountSessions, Password, RoleSchema, Username } from '../lib/auth/accounts.js';
import { answer } from '../lib/api/answer.js';
import { AccountRecord } from '../lib/api/records.js';
import { listAccounts } from '../lib/repo/accounts.js';
import type { Env } from '../lib/ports.js';
import { creationRoute, recordChangeHandler, route } from './route.js';

export const NewAccountBody = z.object({ username: Username, password: Password, role: RoleSchema }).strict();
export const AccountChangeBody = z
  .object({ role: RoleSchema.optional(), disabled: z.boolean().optional(), password: Password.optional() })
  .strict()
  .refine((b) => b.role !== undefined || b.disabled !== undefined || b.password !== undefined, 'send role, disabled or password');

const Accounts = answer('accounts', z.object({ accounts: z.array(AccountRecord) }));
const Account = answer('account', z.object({ account: AccountRecord }));
const SessionsRevoked = answer('sessionsRevoked', z.object({ sessions_revoked: z.number().int() }));

/** GET /api/accounts (admin): every account, without password hashes. */
export async function handleAccountsList(_request: Request, env: Env): Promise<Response> {
  return Accounts.send({ accounts: await listAccounts(env.db) });
}

/** PATCH /api/accounts/{id} (admin): role, disabled or a new password; the last two end its sessions. */
export const handleAccountUpdate = recordChangeHandler('account', AccountChangeBody, Account, async (env, id, body) => ({
  account: await changeAccount(env, id, body),
}));

/** POST /api/accounts/{id}/revoke-sessions (admin): signs the account out everywhere. */
export const handleAccountRevokeSessions = recordChangeHandler('account', z.unknown(), SessionsRevoked, async (env, id) => ({
  sessions_revoked: await endAccountSessions(env, id),
}));

export const accountsListRoute = route('get', '/api/accounts', 'admin', 'Accounts', { answer: Accounts, handler: handleAccountsList });

/** POST /api/accounts (admin): a new account; the username ignores case and must be free (else 409). */
export const accountCreateRoute = creationRoute('/api/accounts', 'admin', 'Create an account', NewAccountBody, Account, async (env, body) => ({
  account: await addAccount(env, body),
}));

export const accountUpdateRoute = route('patch', '/api/accounts/:id', 'admin', 'Change a role, a password or disable an account', {
  body: AccountChangeBody,
  answer: Account,
  handler: handleAccountUpdate,
});

export const accountRevokeSessionsRoute = route('post', '/api/accounts/:id/revoke-sessions', 'admin', 'End every session of an account', {
  answer: SessionsRevoked,
  handler: handleAccountRevokeSessions,
});
