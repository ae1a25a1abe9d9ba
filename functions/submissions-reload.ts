import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { ReloadReportRecord } from '../lib/api/records.js';
import { readJson } from '../lib/http/json.js';
import { reload, type ReloadReport } from '../lib/ingest/reload.js';
import { saveReloadReport, type ReloadItem, type ReloadList } from '../lib/repo/reload-reports.js';
import type { Env } from '../lib/ports.js';
import { ReloadCounts } from './reload-report.js';
import type { RouteSpec } from './route.js';

/** Items an answer names of each list; the kept report (GET /api/reloads/{id}) pages them all. */
const LISTED = 100;

const Reload = answer(
  'reload',
  ReloadReportRecord.extend({
    counts: ReloadCounts.describe('How many each list holds; the lists name at most the first 100'),
    report_id: z.string().describe('GET /api/reloads/{report_id} pages the whole lists'),
  }),
);

/** POST /api/submissions/reload: no body needed; answers the counts, the first 100 of each list and the kept report's id. */
export async function handleSubmissionsReload(request: Request, env: Env): Promise<Response> {
  await readJson(request, env.config.SVC_MAX_BODY_BYTES);
  const report = await reload(env);
  if (report.queued_jobs > 0) await env.jobs.notify(report.queued_jobs);
  const lists = reportLists(report);
  const reportId = await saveReloadReport(env.db, { ...report, lists }, env.clock.now().toISOString());
  return Reload.send({
    ...report,
    imported: report.imported.slice(0, LISTED),
    updated: report.updated.slice(0, LISTED),
    removed: report.removed.slice(0, LISTED),
    rejected: report.rejected.slice(0, LISTED),
    counts: { imported: lists.imported.length, updated: lists.updated.length, removed: lists.removed.length, rejected: lists.rejected.length },
    report_id: reportId,
  });
}

function reportLists(report: ReloadReport): Record<ReloadList, ReloadItem[]> {
  const ids = (list: string[]) => list.map((id) => ({ id, file: null, reason: null }));
  return { imported: ids(report.imported), updated: ids(report.updated), removed: ids(report.removed), rejected: report.rejected };
}

export const reloadRoute: RouteSpec = {
  method: 'post',
  path: '/api/submissions/reload',
  access: 'operator',
  summary: 'Index the submissions folder and queue the analyses it owes',
  answer: Reload,
  handler: handleSubmissionsReload,
};
