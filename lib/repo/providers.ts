import type { ProviderId } from '../providers/catalog.js';
import type { Database } from '../ports.js';

export interface ProviderSwitchRow {
  id: ProviderId;
  switched_on: number;
  switched_off_by: 'operator' | 'emergency' | null;
  last_success_at: string | null;
  last_failure_at: string | null;
  last_error: string | null;
  updated_at: string;
}

export async function listProviderSwitches(db: Database): Promise<ProviderSwitchRow[]> {
  return (await db.prepare('SELECT * FROM providers ORDER BY id').all<ProviderSwitchRow>()).results;
}

export async function getProviderSwitch(db: Database, id: ProviderId): Promise<ProviderSwitchRow | null> {
  return db.prepare('SELECT * FROM providers WHERE id = ?').bind(id).first<ProviderSwitchRow>();
}

export function setProviderSwitchStatement(db: Database, id: ProviderId, on: boolean, by: 'operator' | 'emergency', now: string) {
  return db.prepare('UPDATE providers SET switched_on = ?, switched_off_by = ?, updated_at = ? WHERE id = ?').bind(on ? 1 : 0, on ? null : by, now, id);
}

/** What a provider last did, for the health view; `error` is already free of secrets. */
export async function recordProviderOutcome(db: Database, id: ProviderId, outcome: { ok: true } | { ok: false; error: string }, now: string) {
  if (outcome.ok) {
    await db.prepare('UPDATE providers SET last_success_at = ? WHERE id = ?').bind(now, id).run();
  } else {
    await db.prepare('UPDATE providers SET last_failure_at = ?, last_error = ? WHERE id = ?').bind(now, outcome.error.slice(0, 500), id).run();
  }
}
