import { createHmac } from 'node:crypto';
import type { ProviderId } from './catalog.js';
import {
  getQuotaAlert,
  insertQuotaAlert,
  listQuotaAlerts,
  listUndeliveredAlerts,
  recordAlertAttempt,
  type AlertThreshold,
  type QuotaAlert,
  type QuotaAlertKey,
} from '../repo/alerts.js';
import type { Env } from '../ports.js';

/**
 * Quota alerts (CONTRACT.md section 5). When a provider's use of the day reaches 80 % or 100 % of
 * its daily limit, one alert per provider, threshold and day is stored (admins see it in the
 * console), and, when SVC_ALERT_WEBHOOK_URL is set, POSTed there as JSON, signed with HMAC-SHA256
 * of the body under SVC_ALERT_WEBHOOK_SECRET in `X-SVC-Signature: sha256=<hex>`. Delivery runs
 * beside the enrichment that crossed the line, never inside it, and is retried with back-off; an
 * alert not yet delivered when the process stops is tried again at the next start.
 */

export const ALERT_THRESHOLDS: readonly AlertThreshold[] = [80, 100];
export const ALERT_SIGNATURE_HEADER = 'x-svc-signature';
const MAX_ATTEMPTS = 5;
/** Waits before attempts 2..5: 1 s, 4 s, 16 s, 64 s. */
const retryDelayMs = (attempt: number) => 1000 * 4 ** (attempt - 1);
const WEBHOOK_TIMEOUT_MS = 10_000;

/** Called after a request consumed quota: stores the alerts it crossed and starts their delivery. */
export async function checkQuotaAlerts(env: Env, provider: ProviderId, day: string, used: number, limit: number): Promise<void> {
  if (limit <= 0) return;
  for (const threshold of ALERT_THRESHOLDS) {
    if (used * 100 < limit * threshold) continue;
    const alert = { provider, day, threshold, used, daily_limit: limit, created_at: env.clock.now().toISOString() };
    if (await insertQuotaAlert(env.db, alert)) {
      env.log.warn('quota alert', { provider, threshold, used, daily_limit: limit, day });
      void deliver(env, { provider, day, threshold });
    }
  }
}

export async function listAlerts(env: Env, day: string): Promise<QuotaAlert[]> {
  return listQuotaAlerts(env.db, day);
}

/** Start-up: alerts of the day not yet delivered (the process stopped between attempts) go out again. */
export async function resumeAlertDelivery(env: Env, day: string): Promise<void> {
  if (!env.config.SVC_ALERT_WEBHOOK_URL) return;
  for (const key of await listUndeliveredAlerts(env.db, day, MAX_ATTEMPTS)) void deliver(env, key);
}

export function signAlert(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

async function deliver(env: Env, key: QuotaAlertKey): Promise<void> {
  const target = env.config.SVC_ALERT_WEBHOOK_URL;
  if (!target) return;
  try {
    for (;;) {
      const alert = await getQuotaAlert(env.db, key);
      if (!alert || alert.delivered_at || alert.attempts >= MAX_ATTEMPTS) return;
      const body = JSON.stringify({
        type: 'quota',
        provider: alert.provider,
        threshold_percent: alert.threshold,
        used: alert.used,
        daily_limit: alert.daily_limit,
        day: alert.day,
        at: alert.created_at,
      });
      const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'image-rights-service alerts' };
      if (env.config.SVC_ALERT_WEBHOOK_SECRET) headers[ALERT_SIGNATURE_HEADER] = signAlert(body, env.config.SVC_ALERT_WEBHOOK_SECRET);
      // The webhook is the operator's own address, so, like provider base URLs, it may be private.
      const outcome = await env.egress({
        url: new URL(target),
        method: 'POST',
        headers,
        body: Buffer.from(body),
        timeoutMs: WEBHOOK_TIMEOUT_MS,
        maxBytes: 64 * 1024,
      });
      const delivered = outcome.ok && outcome.status >= 200 && outcome.status < 300;
      const error = delivered ? null : outcome.ok ? `the webhook answered HTTP ${outcome.status}` : outcome.error.message;
      await recordAlertAttempt(env.db, key, delivered ? env.clock.now().toISOString() : null, error);
      if (delivered) return;
      env.log.warn('alert webhook failed', { provider: key.provider, threshold: key.threshold, attempt: alert.attempts + 1, error });
      if (alert.attempts + 1 >= MAX_ATTEMPTS) return;
      await new Promise((resolve) => (setTimeout(resolve, retryDelayMs(alert.attempts + 1)) as { unref?: () => void }).unref?.());
    }
  } catch (error) {
    // The database closed under a pending retry (the service stopped): the next start resumes it.
    env.log.warn('alert delivery stopped', { error: error instanceof Error ? error.message : String(error) });
  }
}
