import { providerHealthRecords, providerRecords, type ProviderHealthRecord, type ProviderRecord } from './state.js';
import { PROVIDER_IDS, type ProviderId } from './catalog.js';
import { auditStatement } from '../repo/audit.js';
import { listProviderSwitches, setProviderSwitchStatement } from '../repo/providers.js';
import type { Env } from '../ports.js';

export type ProvidersStatus = 'ok' | 'degraded' | 'disabled';

/**
 * `disabled` when no provider is usable (nothing leaves the service), `degraded` when a usable
 * provider's latest call failed, `ok` otherwise.
 */
export function providersStatus(providers: ProviderHealthRecord[]): ProvidersStatus {
  const usable = providers.filter((p) => p.enabled);
  if (usable.length === 0) return 'disabled';
  const failing = usable.some((p) => p.last_failure_at !== null && (p.last_success_at === null || p.last_failure_at > p.last_success_at));
  return failing ? 'degraded' : 'ok';
}

export async function providersHealth(env: Env): Promise<{ status: ProvidersStatus; providers: ProviderHealthRecord[] }> {
  const providers = await providerHealthRecords(env);
  return { status: providersStatus(providers), providers };
}

/**
 * Switches every provider off in one transaction: all four send data out of the service (queries,
 * derived images or stored evidence). Each stays off, marked `emergency`, until an operator
 * switches it on again with PATCH /api/providers/{id}.
 */
export async function emergencyDisable(env: Env): Promise<{ disabled: ProviderId[]; providers: ProviderRecord[] }> {
  const { db } = env;
  const before = await listProviderSwitches(db);
  const now = env.clock.now().toISOString();
  const disabled = [...PROVIDER_IDS];
  await db.batch([
    ...disabled.map((id) => setProviderSwitchStatement(db, id, false, 'emergency', now)),
    auditStatement(
      db,
      {
        action: 'provider.emergency_disable',
        target_type: 'provider',
        target_id: null,
        details: { disabled, previously_switched_on: before.filter((p) => p.switched_on).map((p) => p.id) },
      },
      now,
      env.actor,
    ),
  ]);
  return { disabled, providers: await providerRecords(env) };
}
