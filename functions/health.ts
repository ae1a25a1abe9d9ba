import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { pingDatabase } from '../lib/repo/health.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const Health = answer(
  'health',
  z.object({
    status: z.enum(['ok', 'starting', 'degraded']),
    /** Why it is still starting. */
    reason: z.string().optional(),
    version: z.string(),
    uptime_s: z.number(),
    db: z.string(),
  }),
);

/** GET /health: 200 while the database answers, 503 `starting` until start-up is done, 503 `degraded` when the database does not answer. */
export async function handleHealth(_request: Request, env: Env): Promise<Response> {
  const uptime_s = Math.round((env.clock.now().getTime() - env.startedAt.getTime()) / 1000);
  try {
    await pingDatabase(env.db);
  } catch {
    return Health.send({ status: 'degraded', version: env.version, uptime_s, db: 'unavailable' }, 503);
  }
  const starting = (await env.startup?.waiting('database')) ?? (await env.startup?.waiting('work'));
  if (starting) return Health.send({ status: 'starting', reason: starting, version: env.version, uptime_s, db: 'ok' }, 503);
  return Health.send({ status: 'ok', version: env.version, uptime_s, db: 'ok' });
}

export const healthRoute = route('get', '/health', 'public', 'Liveness and database check', {
  answer: Health,
  otherAnswers: { 503: Health },
  handler: handleHealth,
});
