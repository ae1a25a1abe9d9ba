import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { limitedDatabase } from '../../lib/db/limits.js';
import { migrate } from '../../lib/db/migrate.js';
import { openSqlite } from '../../lib/db/sqlite.js';
import { auditStatement, listAuditEvents } from '../../lib/repo/audit.js';
import { addPageCapture, listPageCaptureRows } from '../../lib/repo/captures.js';
import { addEvidence, listEvidence, setEvidenceStatusStatement } from '../../lib/repo/evidence.js';
import { claimNextJob, enqueueJobStatement, finishJob, listJobs, requeueInterruptedJobs } from '../../lib/repo/jobs.js';
import { getKnowledgeEntryForSubmission, upsertAttentionCandidateStatement } from '../../lib/repo/knowledge.js';
import { getProviderSwitch, setProviderSwitchStatement } from '../../lib/repo/providers.js';
import { clearExpiredMediaStatement, listExpiredMedia, listReferencedMedia } from '../../lib/repo/retention.js';
import { commitQuota, releaseQuota, reserveQuota, usedToday } from '../../lib/repo/quota.js';
import { SYSTEM_ACTOR } from '../../lib/auth/actor.js';
import { getSubmission, listQueue, upsertSubmissionStatement, type SubmissionInput } from '../../lib/repo/submissions.js';
import type { Database } from '../../lib/ports.js';

/** The same repository code, proven on better-sqlite3 and on miniflare's D1. */
interface Backend {
  name: string;
  open(): Promise<{ db: Database; close(): Promise<void> }>;
}

let miniflare: Miniflare | undefined;
let d1Count = 0;

const backends: Backend[] = [
  {
    name: 'better-sqlite3',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'svc-repo-'));
      const db = openSqlite(join(dir, 'svc.sqlite3'));
      return {
        db,
        async close() {
          db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'miniflare D1',
    async open() {
      miniflare ??= new Miniflare({
        modules: true,
        script: 'export default { fetch() { return new Response("ok") } }',
        d1Databases: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`DB${i}`, `db-${i}`])),
      });
      const db = (await miniflare.getD1Database(`DB${d1Count++}`)) as unknown as Database;
      return { db, close: async () => {} };
    },
  },
];

afterAll(async () => {
  await miniflare?.dispose();
});

const NOW = '2026-11-21T03:00:00.000Z';
const submission = (id: string, extra: Partial<SubmissionInput> = {}): SubmissionInput => ({
  id,
  title: `Title ${id}`,
  file: `images/${id}.jpg`,
  origin: 'quick',
  submitted_at: '2026-11-21 12:00',
  submitted_at_epoch: 1795748400,
  width: 640,
  height: 480,
  format: 'jpeg',
  bytes: 1000,
  sha256: 'ab'.repeat(32),
  ...extra,
});

describe.each(backends)('repository on $name', (backend) => {
  let db: Database;
  let close: () => Promise<void>;

  beforeEach(async () => {
    ({ db, close } = await backend.open());
    await migrate(db);
  });
  afterEach(async () => close());

  it('keeps page captures, and lets retention pass over those of a decided case or a watched entry', async () => {
    for (const id of ['open', 'decided', 'watched']) await upsertSubmissionStatement(db, submission(id), NOW).run();
    await db.prepare("UPDATE submissions SET decision = '보류', decided_at = ? WHERE id = 'decided'").bind(NOW).run();
    await upsertAttentionCandidateStatement(
      db,
      { submission_id: 'watched', phash: '0'.repeat(16), fingerprints: null, evidence_ids: [], decision: '반려' },
      NOW,
    ).run();
    const capture = async (submissionId: string, fetchedAt: string) => {
      const [e] = await addEvidence(
        db,
        submissionId,
        [{ source: 'global_search', kind: 'web_result', group: 'web_match', url: 'https://example.org/p', matched: true }],
        NOW,
      );
      return addPageCapture(db, {
        evidence_id: e.id,
        submission_id: submissionId,
        page_url: 'https://example.org/p',
        final_url: 'https://example.org/p?x',
        http_status: 200,
        content_type: 'text/html',
        date_header: null,
        last_modified: null,
        bytes: 10,
        sha256: 'cd'.repeat(32),
        media_path: `evidence/${submissionId}/pages/a.html`,
        image_sha256: null,
        fetched_at: fetchedAt,
      });
    };
    const old = await capture('open', '2026-01-01T00:00:00.000Z');
    const recent = await capture('open', '2026-11-20T00:00:00.000Z');
    await capture('decided', '2026-01-01T00:00:00.000Z');
    await capture('watched', '2026-01-01T00:00:00.000Z');
    expect((await listPageCaptureRows(db, 'open')).map((c) => c.id)).toEqual([old.id, recent.id]);
    const cutoff = '2026-06-01T00:00:00.000Z';
    const expired = await listExpiredMedia(db, 'captures', cutoff);
    expect(expired).toEqual([{ id: old.id, path: 'evidence/open/pages/a.html' }]);
    await clearExpiredMediaStatement(db, 'captures', expired[0], cutoff).run();
    expect(await listExpiredMedia(db, 'captures', cutoff)).toEqual([]);
    expect((await listReferencedMedia(db, 'captures')).sort()).toEqual([
      'evidence/decided/pages/a.html',
      'evidence/open/pages/a.html',
      'evidence/watched/pages/a.html',
    ]);
    // A capture belongs to its evidence: deleting the case takes both.
    await db.prepare("DELETE FROM submissions WHERE id = 'open'").run();
    expect(await listPageCaptureRows(db, 'open')).toEqual([]);
  });

  it('applies migrations once', async () => {
    expect(await migrate(db)).toEqual([]);
    const providers = await db.prepare('SELECT id FROM providers ORDER BY id').all<{ id: string }>();
    expect(providers.results.map((r) => r.id)).toEqual(['global_search', 'global_vision', 'local_llm', 'regional']);
  });

  it('stores a submission and returns the contract record', async () => {
    await upsertSubmissionStatement(db, submission('s1'), NOW).run();
    const s = await getSubmission(db, 's1');
    expect(s).toMatchObject({
      id: 's1',
      media_url: '/media/images/s1.jpg',
      analysis_status: 'pending',
      enrichment_status: 'pending',
      risk: { score: 0, level: 'low', signals: [] },
      decision: null,
      evidence_count: 0,
      attention_match: false,
      faces: [],
      people: [],
    });
  });

  it('rolls back a whole batch when one statement fails', async () => {
    await upsertSubmissionStatement(db, submission('s1'), NOW).run();
    await expect(
      db.batch([
        db.prepare("UPDATE submissions SET title = 'changed' WHERE id = 's1'"),
        db.prepare("INSERT INTO evidence (id, submission_id, source, kind, group_key, created_at) VALUES ('e', 'missing', 'internal', 'x', 'internal', 'now')"),
      ]),
    ).rejects.toThrow();
    expect((await getSubmission(db, 's1'))?.title).toBe('Title s1');
  });

  it('enforces foreign keys and the vocabularies', async () => {
    await expect(addEvidence(db, 'nobody', [{ source: 'internal', kind: 'x', group: 'internal' }], NOW)).rejects.toThrow();
    await upsertSubmissionStatement(db, submission('s1'), NOW).run();
    const [e] = await addEvidence(db, 's1', [{ source: 'regional', kind: 'image', group: 'web_related', confidence: 7 }], NOW);
    expect(e.confidence).toBe(1);
    await expect(db.prepare("UPDATE evidence SET status = 'maybe' WHERE id = ?").bind(e.id).run()).rejects.toThrow();
  });

  it('orders the queue undecided first, then by risk', async () => {
    await db.batch([
      upsertSubmissionStatement(db, submission('low'), NOW),
      upsertSubmissionStatement(db, submission('high'), NOW),
      upsertSubmissionStatement(db, submission('decided'), NOW),
      db.prepare("UPDATE submissions SET risk_score = 80, risk_level = 'high' WHERE id IN ('high', 'decided')"),
      db.prepare("UPDATE submissions SET decision = '승인', decided_at = ? WHERE id = 'decided'").bind(NOW),
    ]);
    const queue = await listQueue(db, { limit: 10, offset: 0 });
    expect(queue.items.map((s) => s.id)).toEqual(['high', 'low', 'decided']);
    expect(queue.total).toBe(3);
    expect((await listQueue(db, { limit: 10, offset: 0, decision: 'undecided', level: 'high' })).items.map((s) => s.id)).toEqual(['high']);
  });

  it('shapes the submission record as the contract does, the same in a queue page and alone', async () => {
    await db.batch([
      upsertSubmissionStatement(db, { ...submission('plain'), file: 'images/plain.png' }, NOW),
      upsertSubmissionStatement(db, { ...submission('odd'), file: 'images/사진 #1.png' }, NOW),
      db
        .prepare(
          `UPDATE submissions SET thumb_path = 'thumbs/odd.jpg', faces = '[{"box":{"x":1,"y":2,"width":3,"height":4},"score":0.9}]', risk_score = 45, risk_level = 'medium',
         risk_signals = '[{"code":"internal_match","label":"내부 유사 제출물","weight":25,"evidence_ids":["ev_1"]}]', decision = '보류', decision_note = NULL, decided_at = ?,
         evidence_count = 3, attention_match = 1 WHERE id = 'odd'`,
        )
        .bind(NOW),
      // Cells that are not JSON: the record shows empty lists, as one bad cell never breaks a list.
      db.prepare(`UPDATE submissions SET faces = 'not json', risk_signals = '{broken' WHERE id = 'plain'`),
    ]);
    const odd = await getSubmission(db, 'odd');
    expect(odd).toEqual({
      id: 'odd',
      title: 'Title odd',
      file: 'images/사진 #1.png',
      media_url: `/media/images/${encodeURIComponent('사진 #1.png')}`,
      thumb_url: '/media/thumbs/odd.jpg',
      width: expect.any(Number),
      height: expect.any(Number),
      submitted_at: expect.any(String),
      submitted_at_epoch: expect.any(Number),
      format: expect.any(String),
      bytes: expect.any(Number),
      sha256: expect.any(String),
      phash: null,
      faces: [{ box: { x: 1, y: 2, width: 3, height: 4 }, score: 0.9 }],
      people: [],
      analysis_status: 'pending',
      analysis_error: null,
      enrichment_status: 'pending',
      risk: { score: 45, level: 'medium', signals: [{ code: 'internal_match', label: '내부 유사 제출물', weight: 25, evidence_ids: ['ev_1'] }] },
      decision: { value: '보류', note: null, decided_at: NOW },
      evidence_count: 3,
      attention_match: true,
    });
    expect(await getSubmission(db, 'plain')).toMatchObject({
      media_url: '/media/images/plain.png',
      thumb_url: null,
      faces: [],
      risk: { signals: [] },
      decision: null,
      attention_match: false,
    });
    const page = await listQueue(db, { limit: 10, offset: 0 });
    expect(page.items).toEqual([await getSubmission(db, 'plain'), odd]);
    expect(JSON.parse(JSON.stringify(page))).toEqual({ items: page.items, total: 2, next_cursor: null });
  });

  it('keeps one knowledge entry per submission', async () => {
    await upsertSubmissionStatement(db, submission('s1'), NOW).run();
    const entry = { submission_id: 's1', phash: '0123456789abcdef', fingerprints: null, evidence_ids: [], decision: '보류' as const };
    await upsertAttentionCandidateStatement(db, entry, NOW).run();
    await upsertAttentionCandidateStatement(db, { ...entry, decision: '반려' }, NOW).run();
    const count = await db.prepare('SELECT COUNT(*) AS n FROM knowledge_entries').first<{ n: number }>();
    expect(count?.n).toBe(1);
    expect((await getKnowledgeEntryForSubmission(db, 's1'))?.decision).toBe('반려');
  });

  it('reserves quota up to the limit and counts only committed calls', async () => {
    expect(await reserveQuota(db, 'regional', '2026-11-21', 2)).toBe(true);
    expect(await reserveQuota(db, 'regional', '2026-11-21', 2)).toBe(true);
    expect(await reserveQuota(db, 'regional', '2026-11-21', 2)).toBe(false);
    await commitQuota(db, 'regional', '2026-11-21');
    await releaseQuota(db, 'regional', '2026-11-21');
    expect(await usedToday(db, '2026-11-21')).toEqual({ regional: 1 });
    expect(await reserveQuota(db, 'regional', '2026-11-21', 2)).toBe(true);
    expect(await reserveQuota(db, 'regional', '2026-11-21', 2)).toBe(false);
  });

  it('claims each job once and requeues jobs interrupted by a crash', async () => {
    await db.batch([upsertSubmissionStatement(db, submission('s1'), NOW), upsertSubmissionStatement(db, submission('s2'), NOW)]);
    await db.batch([
      enqueueJobStatement(db, 'enrich', 's1', {}, NOW),
      enqueueJobStatement(db, 'enrich', 's1', {}, NOW),
      enqueueJobStatement(db, 'enrich', 's2', {}, NOW),
    ]);
    expect(await listJobs(db)).toHaveLength(2);
    const first = await claimNextJob(db, ['enrich'], 'a', NOW);
    const second = await claimNextJob(db, ['enrich'], 'b', NOW);
    expect(first?.submission_id).toBe('s1');
    expect(second?.submission_id).toBe('s2');
    expect(await claimNextJob(db, ['enrich'], 'c', NOW)).toBeNull();
    await finishJob(db, { id: first!.id, token: 'a', status: 'done', error: null, finishedAt: NOW });
    expect(await requeueInterruptedJobs(db)).toBe(1);
    const again = await claimNextJob(db, ['enrich'], 'd', NOW);
    expect(again).toMatchObject({ id: second!.id, attempts: 2, status: 'running' });
  });

  it('does not run two jobs of one submission at once', async () => {
    await upsertSubmissionStatement(db, submission('s1'), NOW).run();
    await enqueueJobStatement(db, 'enrich', 's1', {}, NOW).run();
    const running = await claimNextJob(db, ['enrich'], 'a', NOW);
    await enqueueJobStatement(db, 'enrich', 's1', {}, NOW).run();
    expect(await claimNextJob(db, ['enrich'], 'b', NOW)).toBeNull();
    await finishJob(db, { id: running!.id, token: 'a', status: 'done', error: null, finishedAt: NOW });
    expect(await claimNextJob(db, ['enrich'], 'b', NOW)).not.toBeNull();
  });

  it('claims the first of several types that has a job, recording the end of the job run before in the same batch', async () => {
    await db.batch([upsertSubmissionStatement(db, submission('s1'), NOW), upsertSubmissionStatement(db, submission('s2'), NOW)]);
    await db.batch([enqueueJobStatement(db, 'enrich', 's2', {}, NOW), enqueueJobStatement(db, 'analyse', 's1', {}, NOW)]);
    const analysis = await claimNextJob(db, ['analyse', 'enrich'], 'a', NOW);
    expect(analysis).toMatchObject({ type: 'analyse', submission_id: 's1' });
    // An analysis starts from its submission's row: its claim reads it in the same batch; other types' claims do not.
    expect(analysis?.submission).toMatchObject({ id: 's1', analysis_status: 'pending' });
    // The enrichment of s1 waits while its analysis runs; its end, recorded before the claim, lets it go.
    await enqueueJobStatement(db, 'enrich', 's1', {}, NOW).run();
    const ended = { id: analysis!.id, token: 'a', status: 'done' as const, error: null, finishedAt: NOW };
    const next = await claimNextJob(db, ['analyse', 'enrich'], 'b', NOW, ended);
    expect(next).toMatchObject({ type: 'enrich', submission_id: 's2' });
    expect(next?.submission).toBeUndefined();
    expect(await claimNextJob(db, ['analyse', 'enrich'], 'c', NOW)).toMatchObject({ type: 'enrich', submission_id: 's1' });
    expect(await claimNextJob(db, ['analyse', 'enrich', 'index', 'backup'], 'd', NOW)).toBeNull();
    expect((await listJobs(db, 'done')).map((j) => j.id)).toEqual([analysis!.id]);
  });

  it('stores provider switches, evidence marks and audit events', async () => {
    await setProviderSwitchStatement(db, 'regional', false, 'operator', NOW).run();
    expect(await getProviderSwitch(db, 'regional')).toMatchObject({ switched_on: 0, switched_off_by: 'operator' });
    await upsertSubmissionStatement(db, submission('s1'), NOW).run();
    const [e] = await addEvidence(db, 's1', [{ source: 'internal', kind: 'phash', group: 'internal', matched: true, similarity: 0.95 }], NOW);
    await setEvidenceStatusStatement(db, e.id, '오탐').run();
    expect((await listEvidence(db, 's1'))[0]).toMatchObject({ status: '오탐', counts_toward_score: false, match_transform: 'identity' });
    for (let i = 0; i < 3; i++)
      await auditStatement(db, { action: 'search.manual', target_type: 'provider', target_id: `${i}`, details: { i } }, NOW, SYSTEM_ACTOR).run();
    const events = await listAuditEvents(db, 2);
    expect(events.map((e) => e.target_id)).toEqual(['2', '1']);
    expect((await listAuditEvents(db, 10, events[1].id)).map((e) => e.details)).toEqual([{ i: 0 }]);
  });
});

describe('the D1 limits guard (lib/db/limits.ts)', () => {
  it('refuses a statement binding more than 100 values and an invocation past 1,000 queries, before D1 would', async () => {
    const { db: sqlite, close } = await backends[0].open();
    await migrate(sqlite);
    const db = limitedDatabase(sqlite);
    const ids = Array.from({ length: 101 }, (_, i) => `s${i}`);
    expect(() => db.prepare(`SELECT id FROM submissions WHERE id IN (${ids.map(() => '?').join(',')})`).bind(...ids)).toThrow(
      'D1 limit: a statement binds 101 values (at most 100)',
    );
    expect(
      (await db
        .prepare(
          `SELECT COUNT(*) AS n FROM submissions WHERE id IN (${ids
            .slice(0, 100)
            .map(() => '?')
            .join(',')})`,
        )
        .bind(...ids.slice(0, 100))
        .first<{ n: number }>())!.n,
    ).toBe(0);
    const budget = limitedDatabase(sqlite, { maxBoundValues: 100, maxQueries: 5 });
    await budget.batch([budget.prepare('SELECT 1'), budget.prepare('SELECT 2'), budget.prepare('SELECT 3')]);
    expect(budget.queriesLeft()).toBe(2);
    await budget.prepare('SELECT 4').first();
    await budget.prepare('SELECT 5').all();
    expect(budget.queriesLeft()).toBe(0);
    await expect(async () => budget.prepare('SELECT 6').run()).rejects.toThrow('D1 limit: more than 5 queries in one invocation');
    await close();
  });
});
