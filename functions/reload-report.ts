import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { notFound } from '../lib/http/errors.js';
import { readQuery } from '../lib/http/json.js';
import { pathParam, type ParamRequest } from '../lib/http/params.js';
import { getReloadReport, listReloadItems, RELOAD_LISTS } from '../lib/repo/reload-reports.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

export const ReloadReportQuery = z.object({
  list: z.enum(RELOAD_LISTS).default('imported'),
  cursor: z.coerce.number().int().min(0).optional().describe('next_cursor of the previous page'),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .default(500)
    .transform((n) => Math.min(n, 5000)),
});

export const ReloadCounts = z.object({ imported: z.number().int(), updated: z.number().int(), removed: z.number().int(), rejected: z.number().int() });

const ReloadReportPage = answer(
  'reloadReport',
  z.object({
    id: z.string(),
    created_at: z.string(),
    counts: ReloadCounts,
    unchanged: z.number().int(),
    queued_jobs: z.number().int(),
    remaining: z.number().int(),
    list: z.enum(RELOAD_LISTS),
    items: z.array(z.object({ id: z.string().nullable(), file: z.string().nullable(), reason: z.string().nullable() })),
    next_cursor: z.string().nullable(),
  }),
);

/** GET /api/reloads/{id}: one list of a kept reload report, a page at a time, in the reload's order. */
export async function handleReloadReport(request: ParamRequest, env: Env): Promise<Response> {
  const id = pathParam(request, 'id', 'reload report');
  const query = readQuery(request, ReloadReportQuery);
  const report = await getReloadReport(env.db, id);
  if (!report) throw notFound(`unknown reload report: ${id} (the last 20 are kept)`);
  const rows = await listReloadItems(env.db, id, query.list, query.cursor ?? -1, query.limit + 1);
  const page = rows.slice(0, query.limit);
  return ReloadReportPage.send({
    ...report,
    list: query.list,
    items: page.map(({ id: itemId, file, reason }) => ({ id: itemId, file, reason })),
    next_cursor: rows.length > query.limit ? String(page.at(-1)!.seq) : null,
  });
}

export const reloadReportRoute = route(
  'get',
  '/api/reloads/:id',
  'operator',
  'The whole lists of a reload, a page at a time (its answer names only the first 100 of each)',
  { query: ReloadReportQuery, answer: ReloadReportPage, handler: handleReloadReport },
);
