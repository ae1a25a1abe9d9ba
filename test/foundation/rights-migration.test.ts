import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../lib/db/migrate.js';
import { openSqlite } from '../../lib/db/sqlite.js';
import { addEvidence, listEvidence } from '../../lib/repo/evidence.js';
import { getSubmission, getSubmissionRow } from '../../lib/repo/submissions.js';
import type { Database } from '../../lib/ports.js';

/**
 * Migration 0010 rebuilds the evidence table (wider CHECKs for the `file_metadata` source and the
 * `rights` group). On a database that already holds evidence and page captures (which refer to
 * evidence with ON DELETE CASCADE), every row must survive, on better-sqlite3 and on D1, where
 * foreign keys cannot be switched off.
 */
const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), '../../lib/db/migrations');
const NOW = '2026-11-21T03:00:00.000Z';

let miniflare: Miniflare | undefined;
const dirs: string[] = [];
afterAll(async () => {
  await miniflare?.dispose();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const backends: { name: string; open(): Promise<{ db: Database; close(): void }> }[] = [
  {
    name: 'better-sqlite3',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'svc-rights-mig-'));
      dirs.push(dir);
      const db = openSqlite(join(dir, 'svc.sqlite3'));
      return { db, close: () => db.close() };
    },
  },
  {
    name: 'miniflare D1',
    async open() {
      miniflare ??= new Miniflare({ modules: true, script: 'export default { fetch() { return new Response("ok") } }', d1Databases: ['DB'] });
      return { db: (await miniflare.getD1Database('DB')) as unknown as Database, close: () => {} };
    },
  },
];

/**
 * The migrations a database had before this one: every file but 0010, the later additions to
 * evidence (0011, 0013, 0019) and 0022, which reads 0013's columns.
 */
function earlierMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mig-before-'));
  dirs.push(dir);
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(MIGRATIONS)) if (/^\d+_.+\.sql$/.test(f) && !/^00(1[0139]|22)_/.test(f)) copyFileSync(join(MIGRATIONS, f), join(dir, f));
  return dir;
}

describe.each(backends)('migration 0010 on $name', (backend) => {
  it('keeps every evidence row and column, every page capture, the counters, triggers and cascades, and widens the vocabularies', async () => {
    const { db, close } = await backend.open();
    try {
      await migrate(db, earlierMigrations());
      await db.batch([
        db
          .prepare(
            `INSERT INTO submissions (id, title, file, origin, submitted_at, submitted_at_epoch, created_at, updated_at)
           VALUES ('s1', 'Before', 'images/s1.jpg', 'registry', '2026-11-21 12:00', 1795748400, ?, ?)`,
          )
          .bind(NOW, NOW),
        db
          .prepare(
            `INSERT INTO evidence (id, submission_id, source, kind, group_key, title, text, url, image_url, local_media_path, local_media_created_at,
             query, similarity, matched, match_transform, confidence, status, supporting, face_crop, source_evidence_ids, source_urls,
             matched_submission_id, knowledge_entry_id, error_code, error_message, created_at)
           VALUES ('ev_web', 's1', 'global_search', 'web_result', 'web_match', '웹 결과', '설명', 'https://example.org/p', 'https://example.org/i.jpg',
             'evidence/s1/a.jpg', ?, 'q', 0.97, 1, 'identity', 0.9, '판단에 사용', 0, 1, '["x"]', '["https://example.org/p"]', 's2', 'ke_1', NULL, NULL, ?)`,
          )
          .bind(NOW, NOW),
        db
          .prepare(
            `INSERT INTO evidence (id, submission_id, source, kind, group_key, created_at) VALUES ('ev_att', 's1', 'watchlist', 'attention_candidate', 'attention', ?)`,
          )
          .bind(NOW),
        db
          .prepare(
            `INSERT INTO page_captures (id, evidence_id, submission_id, page_url, final_url, http_status, content_type, bytes, sha256, media_path, fetched_at)
           VALUES ('cap_1', 'ev_web', 's1', 'https://example.org/p', 'https://example.org/p?x', 200, 'text/html', 10, ?, 'evidence/s1/pages/a.html', ?)`,
          )
          .bind('cd'.repeat(32), NOW),
      ]);
      const evidenceBefore = await db.prepare('SELECT * FROM evidence ORDER BY id').all();
      const capturesBefore = await db.prepare('SELECT * FROM page_captures').all();
      expect(evidenceBefore.results).toHaveLength(2);
      expect(capturesBefore.results).toHaveLength(1);

      expect(await migrate(db)).toContain('0010_rights_metadata.sql');

      // Every row and value kept; migrations 0013 and 0019 add the geometric match columns and the page count, empty.
      const widened = evidenceBefore.results.map((row) => ({
        ...(row as object),
        match_similarity: null,
        match_inliers: null,
        match_region: null,
        page_count: null,
      }));
      expect((await db.prepare('SELECT * FROM evidence ORDER BY id').all()).results).toEqual(widened);
      expect((await db.prepare('SELECT * FROM page_captures').all()).results).toEqual(capturesBefore.results);
      expect(await getSubmission(db, 's1')).toMatchObject({ evidence_count: 2, attention_match: true });
      expect((await getSubmissionRow(db, 's1'))?.submitter).toBeNull();

      // The new vocabulary is accepted, the counters' triggers are back, a bogus group is still refused.
      await addEvidence(
        db,
        's1',
        [{ source: 'file_metadata', kind: 'rights_metadata', group: 'rights', title: '파일 권리 표기', text: '저작자: 홍길동' }],
        NOW,
      );
      expect((await getSubmission(db, 's1'))?.evidence_count).toBe(3);
      expect((await listEvidence(db, 's1')).map((e) => e.group)).toContain('rights');
      await expect(
        db
          .prepare("INSERT INTO evidence (id, submission_id, source, kind, group_key, created_at) VALUES ('bad', 's1', 'file_metadata', 'k', 'nonsense', ?)")
          .bind(NOW)
          .run(),
      ).rejects.toThrow();
      await expect(
        db
          .prepare("INSERT INTO evidence (id, submission_id, source, kind, group_key, created_at) VALUES ('bad', 's1', 'nowhere', 'k', 'rights', ?)")
          .bind(NOW)
          .run(),
      ).rejects.toThrow();
      await db.prepare("UPDATE evidence SET status = '무관' WHERE id = 'ev_att'").run();
      expect((await getSubmission(db, 's1'))?.attention_match).toBe(false);

      // Captures still belong to their evidence, and evidence to its submission.
      await db.prepare("DELETE FROM evidence WHERE id = 'ev_web'").run();
      expect((await db.prepare('SELECT COUNT(*) AS n FROM page_captures').first<{ n: number }>())?.n).toBe(0);
      expect((await getSubmission(db, 's1'))?.evidence_count).toBe(2);
      await db.prepare("DELETE FROM submissions WHERE id = 's1'").run();
      expect((await db.prepare('SELECT COUNT(*) AS n FROM evidence').first<{ n: number }>())?.n).toBe(0);

      const indexes = await db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name IN ('evidence', 'page_captures') AND sql IS NOT NULL ORDER BY name",
        )
        .all<{ name: string }>();
      expect(indexes.results.map((r) => r.name)).toEqual([
        'evidence_counted_delete',
        'evidence_counted_insert',
        'evidence_counted_update',
        'evidence_media',
        'evidence_submission',
        'page_captures_evidence',
        'page_captures_media',
        'page_captures_page',
        'page_captures_submission',
      ]);
    } finally {
      close();
    }
  });
});
