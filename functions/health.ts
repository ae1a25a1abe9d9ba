import { json } from '../lib/http/json.js';
import type { Env } from '../lib/ports.js';

/** GET /health: 200 while the database answers, 503 `degraded` when it does not. */
export async function handleHealth(_request: Request, env: Env): Promise<Response> {
  const uptime_s = Math.round((env.clock.now().getTime() - env.startedAt.getTime()) / 1000);
  try {
    await env.db.prepare('SELECT 1 AS ok').first();
    return json({ status: 'ok', version: env.version, uptime_s, db: 'ok' });
  } catch {
    return json({ status: 'degraded', version: env.version, uptime_s, db: 'unavailable' }, 503);
  }
}
