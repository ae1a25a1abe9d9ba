import { toPageCapture, type PageCapture, type PageCaptureRow } from './captures.js';
import { toJson } from './json.js';
import { rowsOf } from './columns.js';
import type { Database, Statement } from '../ports.js';

/** A page the provider names as holding a verified match's image (decision 0029). */
export interface PageLink {
  url: string;
  title: string | null;
}

/** A linked page as the API returns it: its latest capture, or why capturing it failed. */
export interface EvidencePage extends PageLink {
  capture: PageCapture | null;
  error: { code: string; message: string } | null;
}

/** The links of one evidence item in the provider's order; a page already linked is kept as it is. */
export function linkPagesStatements(db: Database, submissionId: string, evidenceId: string, pages: readonly PageLink[]) {
  return pages.map((page) =>
    db
      .prepare(
        `INSERT OR IGNORE INTO evidence_pages (evidence_id, submission_id, position, page_url, title)
         VALUES (?, ?, (SELECT coalesce(max(position) + 1, 0) FROM evidence_pages WHERE evidence_id = ?), ?, ?)`,
      )
      .bind(evidenceId, submissionId, evidenceId, page.url, page.title),
  );
}

/** What the last capture of a linked page gave: null after a capture that worked. */
export function setPageErrorStatement(db: Database, evidenceId: string, pageUrl: string, error: { code: string; message: string } | null) {
  return db
    .prepare('UPDATE evidence_pages SET error_code = ?, error_message = ? WHERE evidence_id = ? AND page_url = ?')
    .bind(error?.code ?? null, error?.message ?? null, evidenceId, pageUrl);
}

type LinkRow = { link_evidence_id: string; link_url: string; link_title: string | null; link_error_code: string | null; link_error_message: string | null } & (
  | PageCaptureRow
  | { [K in keyof PageCaptureRow]: null }
);

// Each link with its latest capture of the same evidence and address (index page_captures_page).
const LINKS = `SELECT p.evidence_id AS link_evidence_id, p.page_url AS link_url, p.title AS link_title, p.error_code AS link_error_code,
    p.error_message AS link_error_message, c.*
  FROM evidence_pages p
  LEFT JOIN page_captures c ON c.id = (SELECT id FROM page_captures WHERE evidence_id = p.evidence_id AND page_url = p.page_url ORDER BY fetched_at DESC, id DESC LIMIT 1)`;

function byEvidence(rows: LinkRow[]): Map<string, EvidencePage[]> {
  const out = new Map<string, EvidencePage[]>();
  for (const row of rows) {
    const pages = out.get(row.link_evidence_id) ?? [];
    pages.push({
      url: row.link_url,
      title: row.link_title,
      capture: row.id === null ? null : toPageCapture(row as PageCaptureRow),
      error: row.link_error_code ? { code: row.link_error_code, message: row.link_error_message ?? '' } : null,
    });
    out.set(row.link_evidence_id, pages);
  }
  return out;
}

/** The linked pages of every evidence item of a case; `pagesByEvidence` reads its answer. */
export function pagesOfSubmissionStatement(db: Database, submissionId: string): Statement {
  return db.prepare(`${LINKS} WHERE p.submission_id = ? ORDER BY p.evidence_id, p.position`).bind(submissionId);
}

/** The pages a pagesOfSubmissionStatement answered, by evidence id. */
export const pagesByEvidence = (result: unknown): Map<string, EvidencePage[]> => byEvidence(rowsOf<LinkRow>(result));

/** The linked pages of the given evidence items; `pagesByEvidence` reads its answer. */
export function pagesOfEvidenceStatement(db: Database, evidenceIds: string[]): Statement {
  // One JSON parameter, not one per id: D1 refuses statements with more than 100 bound parameters.
  return db.prepare(`${LINKS} WHERE p.evidence_id IN (SELECT value FROM json_each(?)) ORDER BY p.evidence_id, p.position`).bind(toJson(evidenceIds));
}

/** The linked pages of the given evidence items, by evidence id. */
export async function listPagesOfEvidence(db: Database, evidenceIds: string[]): Promise<Map<string, EvidencePage[]>> {
  if (evidenceIds.length === 0) return new Map();
  return pagesByEvidence(await pagesOfEvidenceStatement(db, evidenceIds).all());
}
