import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { ReloadReportRecord } from '../lib/api/records.js';
import { readJson, readQuery } from '../lib/http/json.js';
import { reload } from '../lib/ingest/reload.js';
import type { Env } from '../lib/ports.js';
import { ReloadCounts } from './reload-report.js';
import { route } from './route.js';

const Reload = answer(
  'reload',
  ReloadReportRecord.extend({
    counts: ReloadCounts.describe('How many each list holds; the lists name at most the first 100'),
    report_id: z.string().describe('GET /api/reloads/{report_id} pages the whole lists'),
  }),
);

export const ReloadQuery = z.object({
  full: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe('true: list and compare the whole folder, whatever the folder journal says (decisions/0041)'),
});

/** POST /api/submissions/reload: no body needed; answers the counts, the first 100 of each list and the kept report's id. */
export async function handleSubmissionsReload(request: Request, env: Env): Promise<Response> {
  const query = readQuery(request, ReloadQuery);
  await readJson(request, env.config.SVC_MAX_BODY_BYTES);
  const report = await reload(env, { full: query.full });
  if (report.queued_jobs > 0) await env.jobs.notify(report.queued_jobs);
  return Reload.send(report);
}

export const reloadRoute = route('post', '/api/submissions/reload', 'operator', 'Index the submissions folder and queue the analyses it owes', {
  query: ReloadQuery,
  answer: Reload,
  handler: handleSubmissionsReload,
});
