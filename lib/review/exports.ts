import { listQueue, type QueueFilter } from '../repo/submissions.js';
import { listDecisionPage, listWatchlistPage } from '../repo/exports.js';
import type { KnowledgeState } from '../vocabulary.js';
import type { Database } from '../ports.js';

/**
 * Exports of the queue, the decisions and the watchlist as CSV or JSON Lines, streamed page by
 * page: at most one page of rows is in memory, and the event loop is free between pages.
 */

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

type Cell = string | number | boolean | null;
type Row = Record<string, Cell>;

const PAGE = 500;

/**
 * One CSV cell (RFC 4180). A text a spreadsheet would run as a formula (a title from a web page
 * starting with `=`, `+`, `-`, `@`) is kept as text with a leading apostrophe.
 */
export function csvCell(value: Cell): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The answer: a byte-order mark first for CSV, so spreadsheet programs read the Korean as UTF-8. */
export function exportResponse(name: string, format: ExportFormat, columns: readonly string[], pages: AsyncGenerator<Row[]>): Response {
  const encoder = new TextEncoder();
  let started = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        if (format === 'csv') controller.enqueue(encoder.encode(`\ufeff${columns.join(',')}\r\n`));
      }
      const next = await pages.next();
      if (next.done) {
        controller.close();
        return;
      }
      const lines = next.value.map((row) => (format === 'csv' ? `${columns.map((c) => csvCell(row[c] ?? null)).join(',')}\r\n` : `${JSON.stringify(row)}\n`));
      controller.enqueue(encoder.encode(lines.join('')));
    },
    async cancel() {
      await pages.return(undefined);
    },
  });
  const type = format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8';
  return new Response(body, {
    headers: {
      'content-type': type,
      'content-disposition': `attachment; filename="${name}.${format}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}

export const QUEUE_COLUMNS = [
  'id',
  'title',
  'submitted_at',
  'risk_score',
  'risk_level',
  'decision',
  'decided_at',
  'analysis_status',
  'enrichment_status',
  'evidence_count',
  'attention_match',
  'phash',
  'sha256',
] as const;

/** The queue in its order with its filters, through the same cursor the API gives out. */
export async function* queuePages(db: Database, filter: Omit<QueueFilter, 'limit' | 'offset' | 'cursor'>): AsyncGenerator<Row[]> {
  let cursor: string | undefined;
  do {
    const page = await listQueue(db, { ...filter, limit: PAGE, offset: 0, cursor });
    yield page.items.map((s) => ({
      id: s.id,
      title: s.title,
      submitted_at: s.submitted_at,
      risk_score: s.risk.score,
      risk_level: s.risk.level,
      decision: s.decision?.value ?? null,
      decided_at: s.decision?.decided_at ?? null,
      analysis_status: s.analysis_status,
      enrichment_status: s.enrichment_status,
      evidence_count: s.evidence_count,
      attention_match: s.attention_match,
      phash: s.phash,
      sha256: s.sha256,
    }));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}

export const DECISION_COLUMNS = [
  'id',
  'title',
  'decision',
  'note',
  'decided_at',
  'risk_score',
  'risk_level',
  'evidence_count',
  'evidence_used',
  'web_matches',
  'attention_match',
] as const;

/** Every decided submission, the latest decision first, with what its evidence counts. */
export async function* decisionPages(db: Database): AsyncGenerator<Row[]> {
  let after: [string, string] | null = null;
  for (;;) {
    const rows = await listDecisionPage(db, after, PAGE);
    if (rows.length === 0) return;
    yield rows;
    const last = rows[rows.length - 1];
    after = [last.decided_at, last.id];
  }
}

export const WATCHLIST_COLUMNS = ['id', 'submission_id', 'title', 'state', 'decision', 'phash', 'created_at', 'updated_at'] as const;

/** Attention candidates and the confirmed watchlist (or one state), by entry id. */
export async function* watchlistPages(db: Database, state?: KnowledgeState): AsyncGenerator<Row[]> {
  let after = '';
  for (;;) {
    const rows = await listWatchlistPage(db, state, after, PAGE);
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1].id;
  }
}
