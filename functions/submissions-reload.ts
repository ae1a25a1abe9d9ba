import { answer } from '../lib/api/answer.js';
import { ReloadReportRecord } from '../lib/api/records.js';
import { readJson } from '../lib/http/json.js';
import { reload } from '../lib/ingest/reload.js';
import type { Env } from '../lib/ports.js';
import type { RouteSpec } from './route.js';

const Reload = answer('reload', ReloadReportRecord);

/** POST /api/submissions/reload: no body needed; answers the reload report. */
export async function handleSubmissionsReload(request: Request, env: Env): Promise<Response> {
  await readJson(request, env.config.SVC_MAX_BODY_BYTES);
  const report = await reload(env);
  if (report.queued_jobs > 0) await env.jobs.notify(report.queued_jobs);
  return Reload.send(report);
}

export const reloadRoute: RouteSpec = {
  method: 'post',
  path: '/api/submissions/reload',
  access: 'operator',
  summary: 'Index the submissions folder and queue the analyses it owes',
  answer: Reload,
  handler: handleSubmissionsReload,
};
