import type { z } from 'zod';
import type { AccountRecord, ApiTokenRecord } from '../api/records.js';
import type { Role } from '../auth/actor.js';
import { newId } from './json.js';
import type { Database } from '../ports.js';

/** An account as the API shows it: never its password hash. */
export type Account = z.infer<typeof AccountRecord>;

interface AccountRow extends Omit<Account, 'disabled'> {
  disabled: number;
  password_hash: string;
  failed_logins: number;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  username: row.username,
  role: row.role,
  disabled: Boolean(row.disabled),
  locked_until: row.locked_until,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export async function countAccounts(db: Database): Promise<number> {
  return Number((await db.prepare('SELECT COUNT(*) AS n FROM accounts').first<{ n: number }>())?.n ?? 0);
}

/** Null when the username is taken (usernames ignore case). */
export async function createAccount(db: Database, input: { username: string; role: Role; passwordHash: string }, now: string): Promise<Account | null> {
  const row = await db
    .prepare(
      `INSERT INTO accounts (id, username, role, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (username) DO NOTHING RETURNING *`,
    )
    .bind(newId('acct'), input.username, input.role, input.passwordHash, now, now)
    .first<AccountRow>();
  return row ? toAccount(row) : null;
}

export async function listAccounts(db: Database): Promise<Account[]> {
  return (await db.prepare('SELECT * FROM accounts ORDER BY username').all<AccountRow>()).results.map(toAccount);
}

export async function getAccount(db: Database, id: string): Promise<Account | null> {
  const row = await db.prepare('SELECT * FROM accounts WHERE id = ?').bind(id).first<AccountRow>();
  return row ? toAccount(row) : null;
}

/** What a sign-in needs: the hash and the lock-out state. */
export async function getLoginRecord(db: Database, username: string) {
  return db.prepare('SELECT * FROM accounts WHERE username = ?').bind(username).first<AccountRow>();
}

export async function recordLoginFailure(db: Database, id: string, lockedUntil: string | null, now: string): Promise<void> {
  await db.prepare('UPDATE accounts SET failed_logins = failed_logins + 1, locked_until = ?, updated_at = ? WHERE id = ?').bind(lockedUntil, now, id).run();
}

export async function recordLoginSuccess(db: Database, id: string, now: string): Promise<void> {
  await db.prepare('UPDATE accounts SET failed_logins = 0, locked_until = NULL, updated_at = ? WHERE id = ?').bind(now, id).run();
}

export async function updateAccount(
  db: Database,
  id: string,
  change: { role?: Role; disabled?: boolean; passwordHash?: string },
  now: string,
): Promise<Account | null> {
  const row = await db
    .prepare(
      `UPDATE accounts SET role = COALESCE(?, role), disabled = COALESCE(?, disabled), password_hash = COALESCE(?, password_hash),
         failed_logins = CASE WHEN ? IS NULL THEN failed_logins ELSE 0 END, locked_until = CASE WHEN ? IS NULL THEN locked_until ELSE NULL END,
         updated_at = ? WHERE id = ? RETURNING *`,
    )
    .bind(
      change.role ?? null,
      change.disabled === undefined ? null : change.disabled ? 1 : 0,
      change.passwordHash ?? null,
      change.passwordHash ?? null,
      change.passwordHash ?? null,
      now,
      id,
    )
    .first<AccountRow>();
  return row ? toAccount(row) : null;
}

export async function createSession(
  db: Database,
  session: { tokenHash: string; accountId: string; csrfToken: string; client: string | null; expiresAt: string },
  now: string,
): Promise<void> {
  await db
    .prepare('INSERT INTO sessions (token_hash, account_id, csrf_token, client, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)')
    .bind(session.tokenHash, session.accountId, session.csrfToken, session.client, now, session.expiresAt)
    .run();
}

/** A live session (not expired, not revoked) of an account that is not disabled. */
export async function findSession(db: Database, tokenHash: string, now: string) {
  return db
    .prepare(
      `SELECT s.csrf_token, a.id AS account_id, a.username, a.role FROM sessions s JOIN accounts a ON a.id = s.account_id
       WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ? AND a.disabled = 0`,
    )
    .bind(tokenHash, now)
    .first<{ csrf_token: string; account_id: string; username: string; role: Role }>();
}

export async function revokeSession(db: Database, tokenHash: string, now: string): Promise<void> {
  await db.prepare('UPDATE sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL').bind(now, tokenHash).run();
}

/** Signs an account out everywhere; returns how many sessions ended. */
export async function revokeAccountSessions(db: Database, accountId: string, now: string): Promise<number> {
  const result = await db
    .prepare('UPDATE sessions SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL AND expires_at > ?')
    .bind(now, accountId, now)
    .run();
  return result.meta.changes;
}

export type ApiToken = z.infer<typeof ApiTokenRecord>;

/** The columns of a token as the API shows it: never its hash. */
const TOKEN_COLUMNS = 'id, name, role, created_by, created_at, last_used_at, revoked_at';

export async function createApiToken(
  db: Database,
  token: { name: string; role: Role; tokenHash: string; createdBy: string | null },
  now: string,
): Promise<ApiToken> {
  return (await db
    .prepare(
      `INSERT INTO api_tokens (id, name, role, token_hash, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)
       RETURNING ${TOKEN_COLUMNS}`,
    )
    .bind(newId('tok'), token.name, token.role, token.tokenHash, token.createdBy, now)
    .first<ApiToken>())!;
}

export async function listApiTokens(db: Database): Promise<ApiToken[]> {
  return (await db.prepare(`SELECT ${TOKEN_COLUMNS} FROM api_tokens ORDER BY created_at DESC, id`).all<ApiToken>()).results;
}

export async function revokeApiToken(db: Database, id: string, now: string): Promise<ApiToken | null> {
  return db.prepare(`UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? RETURNING ${TOKEN_COLUMNS}`).bind(now, id).first<ApiToken>();
}

// A token's last use is written at most once a minute: a script polling the queue with it would
// otherwise commit a write with every request (the write lock taken beside the jobs, and the
// queue's kept pages dropped: lib/review/kept-answers.ts).
const LAST_USE_STEP_MS = 60_000;

/** A token that is not revoked; its last use is recorded (to the minute). */
export async function useApiToken(db: Database, tokenHash: string, now: string): Promise<ApiToken | null> {
  const token = await db.prepare(`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL`).bind(tokenHash).first<ApiToken>();
  if (!token || (token.last_used_at !== null && Date.parse(now) - Date.parse(token.last_used_at) < LAST_USE_STEP_MS)) return token;
  await db.prepare('UPDATE api_tokens SET last_used_at = ? WHERE id = ?').bind(now, token.id).run();
  return { ...token, last_used_at: now };
}
