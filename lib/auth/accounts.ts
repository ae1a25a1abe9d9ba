import { z } from 'zod';
import { conflict, notFound, ServiceError } from '../http/errors.js';
import { auditStatement } from '../repo/audit.js';
import {
  countAccounts,
  createAccount,
  createApiToken,
  createSession,
  getAccount,
  getLoginRecord,
  recordLoginFailure,
  recordLoginSuccess,
  revokeAccountSessions,
  revokeApiToken,
  revokeSession,
  updateAccount,
  type Account,
  type ApiToken,
} from '../repo/accounts.js';
import { ROLES, type Actor, type Role } from './actor.js';
import { hashPassword, newSecret, secretHash, verifyPassword } from './secrets.js';
import type { Env } from '../ports.js';

/** Sign-in, first run, sign-out, accounts and tokens: the rules, and an audit event for each. */

export const Username = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9._@-]{2,64}$/, '2-64 letters, digits, dot, underscore, @ or dash');
export const Password = z.string().min(10, 'at least 10 characters').max(200, 'at most 200 characters');
export const RoleSchema = z.enum(ROLES as [Role, ...Role[]]);

// After this many wrong passwords in a row the account is locked for LOCK_MINUTES.
const MAX_FAILURES = 5;
const LOCK_MINUTES = 15;
// Each wrong password is answered later than the one before (100 ms, doubling, at most 1.6 s).
const failureDelayMs = (failures: number) => Math.min(1600, 100 * 2 ** Math.max(0, failures - 1));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Compared against when the username is unknown, so both cases take the same time.
let decoyHash: Promise<string> | undefined;

export interface NewSession {
  secret: string;
  csrfToken: string;
  expiresAt: string;
  account: Account;
}

/** The one answer to any refused sign-in: it never says which part was wrong. */
const refused = () => new ServiceError('unauthenticated', 'wrong username or password, or the account is locked or disabled');

async function startSession(env: Env, account: Account, client: string | null): Promise<NewSession> {
  const now = env.clock.now();
  const secret = newSecret('sess');
  const csrfToken = newSecret('csrf');
  const expiresAt = new Date(now.getTime() + env.config.SVC_SESSION_HOURS * 3600_000).toISOString();
  await createSession(env.db, { tokenHash: secretHash(secret), accountId: account.id, csrfToken, client, expiresAt }, now.toISOString());
  return { secret, csrfToken, expiresAt, account };
}

const audit = (
  env: Env,
  actor: Actor,
  action: Parameters<typeof auditStatement>[1]['action'],
  target: { type: string; id: string | null },
  details: Record<string, unknown>,
) => auditStatement(env.db, { action, target_type: target.type, target_id: target.id, details }, env.clock.now().toISOString(), actor).run();

export async function login(env: Env, username: string, password: string): Promise<NewSession> {
  const nowDate = env.clock.now();
  const now = nowDate.toISOString();
  const record = await getLoginRecord(env.db, username);
  if (!record) {
    await verifyPassword(password, await (decoyHash ??= hashPassword(newSecret('decoy'))));
    // The typed name is not kept: people type their password there by mistake.
    await audit(env, env.actor, 'auth.login_failed', { type: 'account', id: null }, { reason: 'unknown username' });
    await sleep(failureDelayMs(1));
    throw refused();
  }
  const actor: Actor = { ...env.actor, id: record.id, name: record.username };
  const locked = record.locked_until !== null && record.locked_until > now;
  const valid = await verifyPassword(password, record.password_hash);
  if (locked || record.disabled || !valid) {
    if (!locked && !record.disabled) {
      const failures = record.failed_logins + 1;
      const lockedUntil = failures >= MAX_FAILURES ? new Date(nowDate.getTime() + LOCK_MINUTES * 60_000).toISOString() : null;
      await recordLoginFailure(env.db, record.id, lockedUntil, now);
      await audit(env, actor, 'auth.login_failed', { type: 'account', id: record.id }, { username: record.username, reason: 'wrong password', failures });
      if (lockedUntil)
        await audit(env, actor, 'auth.locked', { type: 'account', id: record.id }, { username: record.username, locked_until: lockedUntil, failures });
      await sleep(failureDelayMs(failures));
    } else {
      await audit(env, actor, 'auth.login_failed', { type: 'account', id: record.id }, { username: record.username, reason: locked ? 'locked' : 'disabled' });
      await sleep(failureDelayMs(MAX_FAILURES));
    }
    throw refused();
  }
  await recordLoginSuccess(env.db, record.id, now);
  const session = await startSession(env, (await getAccount(env.db, record.id))!, env.actor.client);
  await audit(
    env,
    { ...actor, type: 'account', role: record.role },
    'auth.login',
    { type: 'account', id: record.id },
    { username: record.username, expires_at: session.expiresAt },
  );
  return session;
}

export async function logout(env: Env, sessionSecret: string | null): Promise<void> {
  if (sessionSecret) await revokeSession(env.db, secretHash(sessionSecret), env.clock.now().toISOString());
  await audit(env, env.actor, 'auth.logout', { type: 'account', id: env.actor.id }, {});
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;
export const isLoopback = (client: string | null) => client !== null && LOOPBACK.test(client);

/**
 * The first administrator of a fresh data folder, from the machine itself only: until one exists,
 * anybody who can reach the port could otherwise claim the service.
 */
export async function setupFirstAdmin(env: Env, username: string, password: string): Promise<NewSession> {
  if (!isLoopback(env.actor.client))
    throw new ServiceError('forbidden', 'the first administrator can only be created from the machine itself (a loopback address)');
  if ((await countAccounts(env.db)) > 0) throw conflict('an account already exists; sign in instead');
  const account = await createAccount(env.db, { username, role: 'admin', passwordHash: await hashPassword(password) }, env.clock.now().toISOString());
  if (!account) throw conflict('an account already exists; sign in instead');
  const actor: Actor = { ...env.actor, type: 'account', id: account.id, name: account.username, role: 'admin' };
  await audit(env, actor, 'auth.setup', { type: 'account', id: account.id }, { username: account.username, role: 'admin' });
  return startSession(env, account, env.actor.client);
}

export async function addAccount(env: Env, input: { username: string; password: string; role: Role }): Promise<Account> {
  const account = await createAccount(
    env.db,
    { username: input.username, role: input.role, passwordHash: await hashPassword(input.password) },
    env.clock.now().toISOString(),
  );
  if (!account) throw conflict(`the username ${input.username} is taken`);
  await audit(env, env.actor, 'account.create', { type: 'account', id: account.id }, { username: account.username, role: account.role });
  return account;
}

export async function changeAccount(env: Env, id: string, change: { role?: Role; disabled?: boolean; password?: string }): Promise<Account> {
  const before = await getAccount(env.db, id);
  if (!before) throw notFound(`unknown account: ${id}`);
  if (env.actor.id === id && (change.disabled || (change.role && change.role !== 'admin'))) {
    throw conflict('an administrator cannot disable or demote their own account');
  }
  const now = env.clock.now().toISOString();
  const account = (await updateAccount(
    env.db,
    id,
    { role: change.role, disabled: change.disabled, passwordHash: change.password ? await hashPassword(change.password) : undefined },
    now,
  ))!;
  // A disabled account, a new role or a new password ends every session of the account.
  const revoked = change.disabled || change.password || (change.role && change.role !== before.role) ? await revokeAccountSessions(env.db, id, now) : 0;
  await audit(
    env,
    env.actor,
    'account.update',
    { type: 'account', id },
    {
      username: account.username,
      from: { role: before.role, disabled: before.disabled },
      to: { role: account.role, disabled: account.disabled },
      password_changed: Boolean(change.password),
      sessions_revoked: revoked,
    },
  );
  return account;
}

export async function endAccountSessions(env: Env, id: string): Promise<number> {
  const account = await getAccount(env.db, id);
  if (!account) throw notFound(`unknown account: ${id}`);
  const revoked = await revokeAccountSessions(env.db, id, env.clock.now().toISOString());
  await audit(env, env.actor, 'account.sessions_revoke', { type: 'account', id }, { username: account.username, sessions_revoked: revoked });
  return revoked;
}

/** A new personal API token; its secret is returned here once and never stored. */
export async function issueToken(env: Env, input: { name: string; role: Role }): Promise<{ token: ApiToken; secret: string }> {
  const secret = newSecret('svc');
  const token = await createApiToken(
    env.db,
    { name: input.name, role: input.role, tokenHash: secretHash(secret), createdBy: env.actor.id ?? env.actor.name },
    env.clock.now().toISOString(),
  );
  await audit(env, env.actor, 'token.create', { type: 'token', id: token.id }, { name: token.name, role: token.role });
  return { token, secret };
}

export async function withdrawToken(env: Env, id: string): Promise<ApiToken> {
  const token = await revokeApiToken(env.db, id, env.clock.now().toISOString());
  if (!token) throw notFound(`unknown token: ${id}`);
  await audit(env, env.actor, 'token.revoke', { type: 'token', id }, { name: token.name, role: token.role });
  return token;
}
