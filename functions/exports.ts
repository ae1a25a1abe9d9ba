import { z } from 'zod';
import { readQuery } from '../lib/http/json.js';
import {
  decisionPages,
  DECISION_COLUMNS,
  EXPORT_FORMATS,
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

/** GET /api/exports/queue: the whole filtered queue in its order, streamed. */
export async function handleQueueExport(request: Request, env: Env): Promise<Response> {
  const { format: as, ...filter } = readQuery(request, QueueExportQuery);
  return exportResponse('review-queue', as, QUEUE_COLUMNS, queuePages(env.db, filter));
}

/** GET /api/exports/decisions: every decision with its evidence counts, streamed. */
export async function handleDecisionsExport(request: Request, env: Env): Promise<Response> {
  const { format: as } = readQuery(request, DecisionsExportQuery);
  return exportResponse('decisions', as, DECISION_COLUMNS, decisionPages(env.db));
}

/** GET /api/exports/watchlist: attention candidates and the confirmed watchlist, streamed. */
export async function handleWatchlistExport(request: Request, env: Env): Promise<Response> {
  const { format: as, state } = readQuery(request, WatchlistExportQuery);
  return exportResponse('watchlist', as, WATCHLIST_COLUMNS, watchlistPages(env.db, state));
}

export const queueExportRoute = route('get', '/api/exports/queue', 'operator', 'The filtered queue in its order as CSV or JSON Lines, streamed', {
  query: QueueExportQuery,
  file: EXPORT_FILE,
  handler: handleQueueExport,
});

export const decisionsExportRoute = route('get', '/api/exports/decisions', 'operator', 'Every decision with its evidence counts, latest first, streamed', {
  query: DecisionsExportQuery,
  file: EXPORT_FILE,
  handler: handleDecisionsExport,
});

export const watchlistExportRoute = route('get', '/api/exports/watchlist', 'operator', 'Attention candidates and the watchlist, streamed', {
  query: WatchlistExportQuery,
  file: EXPORT_FILE,
  handler: handleWatchlistExport,
});
