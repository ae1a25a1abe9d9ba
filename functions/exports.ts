import { z } from 'zod';
import { readQuery } from '../lib/http/json.js';
import {
  decisionPages,
  DECISION_COLUMNS,
  EXPORT_FORMATS,
  type ExportFormat,
  exportResponse,
  queuePages,
  QUEUE_COLUMNS,
  watchlistPages,
  WATCHLIST_COLUMNS,
} from '../lib/review/exports.js';
import { KNOWLEDGE_STATES } from '../lib/vocabulary.js';
import { queueFilterParams } from './review-queue.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const format = z.enum(EXPORT_FORMATS).default('csv');

export const QueueExportQuery = z.object({ format, ...queueFilterParams });
export const DecisionsExportQuery = z.object({ format });
export const WatchlistExportQuery = z.object({ format, state: z.enum(KNOWLEDGE_STATES).optional() });

const EXPORT_FILE = {
  types: ['text/csv', 'application/x-ndjson'],
  description: 'UTF-8; CSV starts with a byte-order mark (format=csv, the default) or one JSON object per line (format=jsonl)',
};

/**
 * An export route: GET /api/exports/{path}, a file called `name` with these columns, whose rows
 * `pages` streams for the query read (the format aside).
 */
function exportRoute<Q extends z.ZodType<{ format: ExportFormat }>>(
  path: string,
  name: string,
  summary: string,
  Query: Q,
  columns: readonly string[],
  pages: (env: Env, query: Omit<z.output<Q>, 'format'>) => Parameters<typeof exportResponse>[3],
) {
  return route('get', `/api/exports/${path}`, 'operator', summary, {
    query: Query,
    file: EXPORT_FILE,
    handler: async (request, env) => {
      const { format: as, ...query } = readQuery(request, Query);
      return exportResponse(name, as, columns, pages(env, query));
    },
  });
}

/** GET /api/exports/queue: the whole filtered queue in its order, streamed. */
export const queueExportRoute = exportRoute(
  'queue',
  'review-queue',
  'The filtered queue in its order as CSV or JSON Lines, streamed',
  QueueExportQuery,
  QUEUE_COLUMNS,
  (env, filter) => queuePages(env.db, filter),
);

/** GET /api/exports/decisions: every decision with its evidence counts, streamed. */
export const decisionsExportRoute = exportRoute(
  'decisions',
  'decisions',
  'Every decision with its evidence counts, latest first, streamed',
  DecisionsExportQuery,
  DECISION_COLUMNS,
  (env) => decisionPages(env.db),
);

/** GET /api/exports/watchlist: attention candidates and the confirmed watchlist, streamed. */
export const watchlistExportRoute = exportRoute(
  'watchlist',
  'watchlist',
  'Attention candidates and the watchlist, streamed',
  WatchlistExportQuery,
  WATCHLIST_COLUMNS,
  (env, { state }) => watchlistPages(env.db, state),
);
