import { answer } from '../lib/api/answer.js';
import { RetentionReportRecord } from '../lib/api/records.js';
import { runRetention } from '../lib/review/retention.js';
import type { Env } from '../lib/ports.js';
import type { RouteSpec } from './route.js';

const Retention = answer('retention', RetentionReportRecord);

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
