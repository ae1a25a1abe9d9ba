import type { Database } from '../ports.js';

/**
 * Daily quota per provider, counted per request. A call first reserves one unit (refused when
 * used + reserved would pass the limit, so concurrent jobs can never exceed it), then commits it
 * when the request succeeded or releases it when it failed: a failure consumes nothing.
 */

export async function reserveQuota(db: Database, provider: string, day: string, limit: number): Promise<boolean> {
  await db.prepare('INSERT OR IGNORE INTO quota_usage (provider, day) VALUES (?, ?)').bind(provider, day).run();
  const result = await db
    .prepare('UPDATE quota_usage SET reserved = reserved + 1 WHERE provider = ? AND day = ? AND used + reserved < ?')
    .bind(provider, day, limit)
    .run();
  return result.meta.changes === 1;
}

/** Returns the day's use after this request. */
export async function commitQuota(db: Database, provider: string, day: string): Promise<number> {
  const row = await db
    .prepare('UPDATE quota_usage SET reserved = MAX(reserved - 1, 0), used = used + 1 WHERE provider = ? AND day = ? RETURNING used')
    .bind(provider, day)
    .first<{ used: number }>();
  return Number(row?.used ?? 0);
}

export async function releaseQuota(db: Database, provider: string, day: string): Promise<void> {
  await db.prepare('UPDATE quota_usage SET reserved = MAX(reserved - 1, 0) WHERE provider = ? AND day = ?').bind(provider, day).run();
}

export async function usedToday(db: Database, day: string): Promise<Record<string, number>> {
  const rows = await db.prepare('SELECT provider, used FROM quota_usage WHERE day = ?').bind(day).all<{ provider: string; used: number }>();
  return Object.fromEntries(rows.results.map((r) => [r.provider, Number(r.used)]));
}

/** Reservations left by a process that died mid-call are dropped at start-up. */
export async function clearReservations(db: Database): Promise<void> {
  await db.prepare('UPDATE quota_usage SET reserved = 0 WHERE reserved <> 0').run();
}
