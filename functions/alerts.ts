import { listAlerts } from '../lib/providers/alerts.js';
import { json } from '../lib/http/json.js';
import { dayIn } from '../lib/time.js';
import type { Env } from '../lib/ports.js';

/** GET /api/alerts (admin): today's quota alerts, whether the webhook got them, and why not. */
export async function handleAlerts(_request: Request, env: Env): Promise<Response> {
  return json({
    alerts: await listAlerts(env, dayIn(env.clock.now(), env.config.SVC_TIMEZONE)),
    webhook_configured: Boolean(env.config.SVC_ALERT_WEBHOOK_URL),
  });
}
