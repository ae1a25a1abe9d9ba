import { json, readJson } from '../lib/http/json.js';
import { reload } from '../lib/ingest/reload.js';
import type { Env } from '../lib/ports.js';

/** POST /api/submissions/reload: no body needed; answers the reload report. */
export async function handleSubmissionsReload(request: Request, env: Env): Promise<Response> {
  await readJson(request, env.config.SVC_MAX_BODY_BYTES);
  const report = await reload(env);
  if (report.queued_jobs > 0) await env.jobs.notify(report.queued_jobs);
  return json(report);
}
