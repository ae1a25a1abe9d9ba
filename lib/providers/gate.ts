import { missingEnv, providerInfo, type ProviderId } from './catalog.js';
import type { ProviderResult } from './call.js';
import { getProviderSwitch, recordProviderOutcome } from '../repo/providers.js';
import { commitQuota, releaseQuota, reserveQuota } from '../repo/quota.js';
import { dayIn } from '../time.js';
import { checkQuotaAlerts } from './alerts.js';
import type { Env } from '../ports.js';

/**
 * Every outbound provider call passes here: the provider must be switched on and configured at the
 * moment of the call (so an emergency disable stops work already queued), one unit of the daily
 * quota is reserved first and kept only when the request succeeded.
 */
export type GateRefusal = { ok: false; refused: 'provider_disabled' | 'quota_exhausted'; error: { code: string; message: string } };

export async function providerBlock(env: Env, id: ProviderId): Promise<string | null> {
  const missing = missingEnv(env.config, id);
  if (missing.length) return `${id} is disabled: missing env ${missing.join(', ')}`;
  const row = await getProviderSwitch(env.db, id);
  if (!row?.switched_on) return `${id} is disabled: ${row?.switched_off_by === 'emergency' ? 'emergency disable' : 'switched off'}`;
  return null;
}

export async function gatedCall<T extends object>(env: Env, id: ProviderId, call: () => Promise<ProviderResult<T>>): Promise<ProviderResult<T> | GateRefusal> {
  const blocked = await providerBlock(env, id);
  if (blocked) return { ok: false, refused: 'provider_disabled', error: { code: 'provider_disabled', message: blocked } };
  const day = dayIn(env.clock.now(), env.config.SVC_TIMEZONE);
  const limit = Number(env.config[providerInfo(env.config, id).dailyLimitKey]);
  // The language model's limit is shown, not enforced (SPEC.md section 8): its calls are only counted.
  const enforced = id !== 'local_llm';
  if (!(await reserveQuota(env.db, id, day, enforced ? limit : Number.MAX_SAFE_INTEGER))) {
    return { ok: false, refused: 'quota_exhausted', error: { code: 'quota_exhausted', message: `${id} daily limit of ${limit} requests is used up` } };
  }
  let result: ProviderResult<T>;
  try {
    result = await call();
  } catch (error) {
    result = { ok: false, error: { code: 'provider_error', message: `${id}: ${error instanceof Error ? error.message : String(error)}` } };
  }
  const now = env.clock.now().toISOString();
  if (result.ok) {
    const used = await commitQuota(env.db, id, day);
    await checkQuotaAlerts(env, id, day, used, limit);
    await recordProviderOutcome(env.db, id, { ok: true }, now);
  } else {
    await releaseQuota(env.db, id, day);
    await recordProviderOutcome(env.db, id, { ok: false, error: `${result.error.code}: ${result.error.message}` }, now);
  }
  return result;
}
