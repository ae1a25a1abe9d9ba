import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../lib/db/migrate.js';
import { openSqlite } from '../../lib/db/sqlite.js';
import { auditDecisionStatement, auditEvidenceStatusStatement, auditKnowledgeMoveStatement, listAuditEvents } from '../../lib/repo/audit.js';
import { addEvidence, setEvidenceStatusStatement } from '../../lib/repo/evidence.js';
import { getKnowledgeEntryForSubmission, moveKnowledgeStateStatement, upsertAttentionCandidateStatement } from '../../lib/repo/knowledge.js';
import type { Actor } from '../../lib/auth/actor.js';

const OPERATOR: Actor = { type: 'account', id: 'acct_1', name: 'kim', role: 'operator', client: '127.0.0.1' };
import { clearExpiredMediaStatement, listExpiredMedia } from '../../lib/repo/retention.js';
import { saveAnalysisStatement, saveDecisionStatement, saveDerivedPath, upsertSubmissionStatement } from '../../lib/repo/submissions.js';
import type { Database } from '../../lib/ports.js';

/**
 * The statements the review workflow added to the repository (SQLite JSON functions, per-statement
 * change counts from a batch) behave the same on better-sqlite3 and on miniflare's D1.
 */
let miniflare: Miniflare | undefined;
let d1Count = 0;
const backends = [
  {
    name: 'better-sqlite3',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'svc-review-repo-'));
      const db = openSqlite(join(dir, 'svc.sqlite3'));
      return { db: db as Database, close: async () => (db.close(), rmSync(dir, { recursive: true, force: true })) };
    },
  },
  {
    name: 'miniflare D1',
    async open() {
      miniflare ??= new Miniflare({
        modules: true,
        script: 'export default { fetch() { return new Response("ok") } }',
        d1Databases: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`DB${i}`, `review-db-${i}`])),
      });
      return { db: (await miniflare.getD1Database(`DB${d1Count++}`)) as unknown as Database, close: async () => {} };
    },
  },
];
afterAll(async () => miniflare?.dispose());

const T1 = '2026-11-21T03:00:00.000Z';
const T2 = '2026-11-21T04:00:00.000Z';

describe.each(backends)('review statements on $name', (backend) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeEach(async () => {
    ({ db, close } = await backend.open());
    await migrate(db);
    await upsertSubmissionStatement(
      db,
      {
        id: 's1',
        title: 't',
        file: 'images/s1.jpg',
        origin: 'quick',
        submitted_at: '2026-11-21 12:00',
        submitted_at_epoch: 1795748400,
        width: 1,
        height: 1,
        format: 'jpeg',
        bytes: 1,
        sha256: 'ab',
      },
      T1,
    ).run();
    await saveAnalysisStatement(
      db,
      's1',
      'ab',
      { phash: '0123456789abcdef', fingerprints: { v: 1 }, faces: [], people: [], thumb_path: 'thumbs/s1.jpg' },
      T1,
    ).run();
    await saveDerivedPath(db, 's1', 'derived/s1.jpg', T1);
  });
  afterEach(async () => close());

  it('audits the replaced evidence status and decision read inside the batch', async () => {
    const [e] = await addEvidence(db, 's1', [{ source: 'regional', kind: 'image_result', group: 'web_related' }], T1);
    await db.batch([auditEvidenceStatusStatement(db, e.id, '무관', T1, OPERATOR), setEvidenceStatusStatement(db, e.id, '무관')]);
    await db.batch([auditEvidenceStatusStatement(db, e.id, '오탐', T1, OPERATOR), setEvidenceStatusStatement(db, e.id, '오탐')]);
    await db.batch([
      upsertAttentionCandidateStatement(db, { submission_id: 's1', phash: '0123456789abcdef', fingerprints: null, evidence_ids: [e.id], decision: '반려' }, T1),
      auditDecisionStatement(db, 's1', { to: '반려', note: 'n', evidence_ids: [e.id], knowledge_entry: true }, T1, OPERATOR),
      saveDecisionStatement(db, 's1', '반려', 'n', T1),
    ]);
    await db.batch([
      auditDecisionStatement(db, 's1', { to: '승인', note: null, evidence_ids: [], knowledge_entry: false }, T2, OPERATOR),
      saveDecisionStatement(db, 's1', '승인', null, T2),
    ]);
    const entry = await getKnowledgeEntryForSubmission(db, 's1');
    const events = await listAuditEvents(db, 10);
    expect(events.map((ev) => [ev.action, ev.target_id, ev.details])).toEqual([
      [
        'submission.decision_change',
        's1',
        { from: '반려', from_note: 'n', from_decided_at: T1, to: '승인', note: null, evidence_ids: [], knowledge_entry_id: null },
      ],
      [
        'submission.decision',
        's1',
        { from: null, from_note: null, from_decided_at: null, to: '반려', note: 'n', evidence_ids: [e.id], knowledge_entry_id: entry!.id },
      ],
      ['evidence.status', e.id, { submission_id: 's1', from: '무관', to: '오탐' }],
      ['evidence.status', e.id, { submission_id: 's1', from: null, to: '무관' }],
    ]);
    expect(
      events.every(
        (ev) =>
          ev.actor.type === 'account' && ev.actor.id === 'acct_1' && ev.actor.name === 'kim' && ev.actor.role === 'operator' && ev.actor.client === '127.0.0.1',
      ),
    ).toBe(true);
  });

  it('stores and reads back 150 evidence items at once (more ids than D1 binds per statement)', async () => {
    const items = Array.from({ length: 150 }, (_, i) => ({
      source: 'regional' as const,
      kind: 'image_result',
      group: 'web_related' as const,
      title: `result ${i}`,
    }));
    const stored = await addEvidence(db, 's1', items, T1);
    expect(stored).toHaveLength(150);
    expect(stored.map((e) => e.title)).toEqual(items.map((e) => e.title));
  });

  it('moves a knowledge state once: a repeated move changes and audits nothing', async () => {
    await upsertAttentionCandidateStatement(
      db,
      { submission_id: 's1', phash: '0123456789abcdef', fingerprints: null, evidence_ids: [], decision: '보류' },
      T1,
    ).run();
    const { id } = (await getKnowledgeEntryForSubmission(db, 's1'))!;
    const move = (now: string) =>
      db.batch([
        auditKnowledgeMoveStatement(db, id, 'knowledge.promote', '확정 DB 편입', now, OPERATOR),
        moveKnowledgeStateStatement(db, id, '확정 DB 편입', now),
      ]);
    await move(T1);
    await move(T2);
    expect(await getKnowledgeEntryForSubmission(db, 's1')).toMatchObject({ state: '확정 DB 편입', updated_at: T1 });
    expect((await listAuditEvents(db, 10)).map((ev) => ev.details)).toEqual([{ submission_id: 's1', from: '주의 후보', to: '확정 DB 편입' }]);
  });

  it('reports per statement whether an expired derived image was cleared', async () => {
    const expired = await listExpiredMedia(db, 'derived', T2);
    expect(expired).toEqual([{ id: 's1', path: 'derived/s1.jpg' }]);
    const results = await db.batch([
      clearExpiredMediaStatement(db, 'derived', { id: 's1', path: 'derived/other.jpg' }, T2),
      clearExpiredMediaStatement(db, 'derived', expired[0], T2),
    ]);
    expect(results.map((r) => (r as { meta: { changes: number } }).meta.changes)).toEqual([0, 1]);
    expect(await listExpiredMedia(db, 'derived', T2)).toEqual([]);
  });
});
