-- People who sign in to the console, with one role each. Passwords are scrypt hashes.
CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  username TEXT NOT NULL UNIQUE COLLATE NOCASE,
  role TEXT NOT NULL CHECK (role IN ('operator', 'admin')),
  password_hash TEXT NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0,
  failed_logins INTEGER NOT NULL DEFAULT 0,
  locked_until TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- A signed-in browser. Only the SHA-256 of the cookie's value is stored.
CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  csrf_token TEXT NOT NULL,
  client TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX sessions_account ON sessions (account_id);

-- Personal API tokens made by admins for scripts; shown once, stored as a SHA-256.
CREATE TABLE api_tokens (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('operator', 'admin')),
  token_hash TEXT NOT NULL UNIQUE,
  created_by TEXT,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);

-- Who did it, from where: every audit event from now on says so.
ALTER TABLE audit_events ADD COLUMN actor_type TEXT;
ALTER TABLE audit_events ADD COLUMN actor_id TEXT;
ALTER TABLE audit_events ADD COLUMN actor_name TEXT;
ALTER TABLE audit_events ADD COLUMN actor_role TEXT;
ALTER TABLE audit_events ADD COLUMN client TEXT;
-- The audit log is append-only, even to a bug: no UPDATE or DELETE gets through.
CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

-- Quota alerts: one per provider, threshold and day; delivery to the webhook is retried.
CREATE TABLE quota_alerts (
  provider TEXT NOT NULL,
  day TEXT NOT NULL,
  threshold INTEGER NOT NULL CHECK (threshold IN (80, 100)),
  used INTEGER NOT NULL,
  daily_limit INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  delivered_at TEXT,
  last_error TEXT,
  PRIMARY KEY (provider, day, threshold)
);
