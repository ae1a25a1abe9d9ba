import { z } from 'zod';
import { listAlerts } from '../lib/providers/alerts.js';
import { answer } from '../lib/api/answer.js';
import { QuotaAlertRecord } from '../lib/api/records.js';
import { dayIn } from '../lib/time.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const Alerts = answer('alerts', z.object({ alerts: z.array(QuotaAlertRecord), webhook_configured: z.boolean() }));

/** GET /api/alerts (admin): today's quota alerts, whether the webhook got them, and why not. */
export async function handleAlerts(_request: Request, env: Env): Promise<Response> {
  return Alerts.send({
    alerts: await listAlerts(env, dayIn(env.clock.now(), env.config.SVC_TIMEZONE)),
    webhook_configured: Boolean(env.config.SVC_ALERT_WEBHOOK_URL),
  });
}

export const alertsRoute = route('get', '/api/alerts', 'admin', "Today's quota alerts and their webhook delivery", { answer: Alerts, handler: handleAlerts });
