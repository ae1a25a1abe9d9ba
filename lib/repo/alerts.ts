import type { z } from 'zod';
import type { QuotaAlertRecord } from '../api/records.js';
import type { Database } from '../ports.js';

/** The stored quota alerts, one per provider, threshold and day (the rules: lib/providers/alerts.ts). */

export type QuotaAlert = z.infer<typeof QuotaAlertRecord>;
/** The percents of the daily limit an alert is raised at. */
export type AlertThreshold = QuotaAlert['threshold'];

export type QuotaAlertKey = Pick<QuotaAlert, 'provider' | 'day' | 'threshold'>;

/** Stores an alert unless the provider's day already has one at this threshold; whether it did. */
export async function insertQuotaAlert(db: Database, alert: Pick<QuotaAlert, 'provider' | 'day' | 'threshold' | 'used' | 'daily_limit' | 'created_at'>) {
  const inserted = await db
    .prepare(
      `INSERT INTO quota_alerts (provider, day, threshold, used, daily_limit, created_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (provider, day, threshold) DO NOTHING`,
    )
    .bind(alert.provider, alert.day, alert.threshold, alert.used, alert.daily_limit, alert.created_at)
    .run();
  return inserted.meta.changes === 1;
}

export async function listQuotaAlerts(db: Database, day: string): Promise<QuotaAlert[]> {
  return (await db.prepare('SELECT * FROM quota_alerts WHERE day = ? ORDER BY created_at DESC, provider, threshold').bind(day).all<QuotaAlert>()).results;
}

/** The day's alerts not yet delivered that have attempts left. */
export async function listUndeliveredAlerts(db: Database, day: string, maxAttempts: number): Promise<QuotaAlertKey[]> {
  const rows = await db
    .prepare('SELECT provider, day, threshold FROM quota_alerts WHERE day = ? AND delivered_at IS NULL AND attempts < ?')
    .bind(day, maxAttempts)
    .all<QuotaAlertKey>();
  return rows.results;
}

export async function getQuotaAlert(db: Database, key: QuotaAlertKey): Promise<QuotaAlert | null> {
  return db
    .prepare('SELECT * FROM quota_alerts WHERE provider = ? AND day = ? AND threshold = ?')
    .bind(key.provider, key.day, key.threshold)
    .first<QuotaAlert>();
}

/** One delivery attempt: delivered at `deliveredAt`, or not (null) with the error. */
export async function recordAlertAttempt(db: Database, key: QuotaAlertKey, deliveredAt: string | null, error: string | null): Promise<void> {
  await db
    .prepare('UPDATE quota_alerts SET attempts = attempts + 1, delivered_at = ?, last_error = ? WHERE provider = ? AND day = ? AND threshold = ?')
    .bind(deliveredAt, error, key.provider, key.day, key.threshold)
    .run();
}
