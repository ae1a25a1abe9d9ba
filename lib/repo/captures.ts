import type { z } from 'zod';
import type { PageCaptureRecord } from '../api/records.js';
import { newId } from './json.js';
import type { Database } from '../ports.js';

/** A page as the service fetched it, tied to the web evidence it was found for. */
export type PageCapture = z.infer<typeof PageCaptureRecord>;

export interface PageCaptureRow {
  id: string;
  evidence_id: string;
  submission_id: string;
  page_url: string;
  final_url: string;
  http_status: number;
  content_type: string | null;
  date_header: string | null;
  last_modified: string | null;
  bytes: number;
  sha256: string;
  media_path: string | null;
  image_sha256: string | null;
  fetched_at: string;
}

export type NewPageCapture = Omit<PageCaptureRow, 'id'>;

export const captureUrl = (id: string) => `/api/captures/${encodeURIComponent(id)}`;

export function toPageCapture(row: PageCaptureRow): PageCapture {
  return {
    id: row.id,
    evidence_id: row.evidence_id,
    submission_id: row.submission_id,
    page_url: row.page_url,
    final_url: row.final_url,
    http_status: row.http_status,
    content_type: row.content_type,
    date: row.date_header,
    last_modified: row.last_modified,
    bytes: row.bytes,
    sha256: row.sha256,
    media_url: row.media_path ? captureUrl(row.id) : null,
    image_sha256: row.image_sha256,
    fetched_at: row.fetched_at,
  };
}

export async function addPageCapture(db: Database, capture: NewPageCapture): Promise<PageCaptureRow> {
  const row = { id: newId('pc'), ...capture };
  await db
    .prepare(
      `INSERT INTO page_captures (id, evidence_id, submission_id, page_url, final_url, http_status, content_type, date_header,
         last_modified, bytes, sha256, media_path, image_sha256, fetched_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      row.id,
      row.evidence_id,
      row.submission_id,
      row.page_url,
      row.final_url,
      row.http_status,
      row.content_type,
      row.date_header,
      row.last_modified,
      row.bytes,
      row.sha256,
      row.media_path,
      row.image_sha256,
      row.fetched_at,
    )
    .run();
  return row;
}

export async function getPageCaptureRow(db: Database, id: string): Promise<PageCaptureRow | null> {
  return db.prepare('SELECT * FROM page_captures WHERE id = ?').bind(id).first<PageCaptureRow>();
}

/** Every capture of a case, oldest first. */
export async function listPageCaptureRows(db: Database, submissionId: string): Promise<PageCaptureRow[]> {
  return (await db.prepare('SELECT * FROM page_captures WHERE submission_id = ? ORDER BY fetched_at, id').bind(submissionId).all<PageCaptureRow>()).results;
}
