import { configuredEnv, missingEnv, PROVIDER_IDS, providerInfo, type ProviderId } from './catalog.js';
import { listProviderSwitches, type ProviderSwitchRow } from '../repo/providers.js';
import { usedToday } from '../repo/quota.js';
import { dayIn } from '../time.js';
import type { z } from 'zod';
import type { ProviderHealthRecord as ProviderHealthSchema, ProviderRecord as ProviderSchema } from '../api/records.js';
import type { Env } from '../ports.js';

/** A provider as the API shows it (CONTRACT.md section 3): names of variables, never their values. */
export type ProviderRecord = z.infer<typeof ProviderSchema>;
export type ProviderHealthRecord = z.infer<typeof ProviderHealthSchema>;

function toRecord(env: Env, row: ProviderSwitchRow, used: number): ProviderHealthRecord {
  const info = providerInfo(env.config, row.id);
  const missing = missingEnv(env.config, row.id);
  const switchedOn = Boolean(row.switched_on);
  const limit = Number(env.config[info.dailyLimitKey]);
  let reason: string | null = null;
  if (missing.length) reason = `missing env: ${missing.join(', ')}`;
  else if (!switchedOn) reason = row.switched_off_by === 'emergency' ? 'emergency disable' : 'switched off';
  return {
    id: row.id,
    name: info.name,
    kind: info.kind,
    vendor: info.vendor,
    enabled: switchedOn && missing.length === 0,
    switched_on: switchedOn,
    configured: missing.length === 0,
    missing_env: missing,
    reason,
    requiredEnv: [...info.requiredEnv],
    configuredEnv: configuredEnv(env.config, row.id),
    daily_limit: limit,
    used_today: used,
    remaining_today: Math.max(0, limit - used),
    last_success_at: row.last_success_at,
    last_failure_at: row.last_failure_at,
    last_error: row.last_error,
  };
}

export async function providerHealthRecords(env: Env): Promise<ProviderHealthRecord[]> {
  const [rows, used] = await Promise.all([listProviderSwitches(env.db), usedToday(env.db, dayIn(env.clock.now(), env.config.SVC_TIMEZONE))]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return PROVIDER_IDS.flatMap((id) => {
    const row = byId.get(id);
    return row ? [toRecord(env, row, used[id] ?? 0)] : [];
  });
}

export async function providerRecords(env: Env): Promise<ProviderRecord[]> {
  return (await providerHealthRecords(env)).map(({ last_success_at: _s, last_failure_at: _f, last_error: _e, ...p }) => p);
}

export async function providerRecord(env: Env, id: ProviderId): Promise<ProviderRecord> {
  const all = await providerRecords(env);
  return all.find((p) => p.id === id)!;
}
