import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { iso } from '../lib/api/records.js';
import { runRetention } from '../lib/review/retention.js';
import type { Env } from '../lib/ports.js';
import type { RouteSpec } from './route.js';

const Retention = answer(
  'retention',
  z.object({
    retention_days: z.number().int(),
    cutoff: iso,
    evidence_images: z.number().int(),
    derived_images: z.number().int(),
    unreferenced_files: z.number().int(),
    failed_files: z.number().int(),
  }),
);

/** POST /api/retention/run: the daily retention job, on demand; no body needed. */
export async function handleRetentionRun(_request: Request, env: Env): Promise<Response> {
  return Retention.send(await runRetention(env));
}

export const retentionRunRoute: RouteSpec = {
  method: 'post',
  path: '/api/retention/run',
  access: 'admin',
  summary: 'Delete downloaded and derived images older than the retention period now',
  answer: Retention,
  handler: handleRetentionRun,
};
