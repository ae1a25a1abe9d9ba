import { describe, expect, it } from 'vitest';
import { addEvidence, setEvidenceStatusStatement } from '../../lib/repo/evidence.js';
import { listQueue, saveDecisionStatement, saveRiskStatement, upsertSubmissionStatement, type QueueFilter } from '../../lib/repo/submissions.js';
import { DECISIONS, RISK_LEVELS } from '../../lib/vocabulary.js';
import { useTestEnv } from '../helpers/env.js';
import { seededRandom } from '../helpers/random.js';
import { attentionMatch, webMatch } from './seed.js';
import type { SqlValue } from '../../lib/ports.js';

// More rows than the point where a common search term is read in queue order instead of sorted.
const SUBMISSIONS = 2600;
const ENRICHMENT = ['pending', 'running', 'done', 'failed', 'skipped'] as const;

const env = useTestEnv();

/** A queue built and then changed the way work changes it: risk, decisions, enrichment, evidence marks. */
async function seedAndChurn() {
  const random = seededRandom(5);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  const now = env.clock.now().toISOString();
  const statements = [];
  for (let i = 0; i < SUBMISSIONS; i++) {
    const id = `sub-${i}`;
    // Half the rows far above the others: a short search's count with a filter reads spans of
    // 20,000 rowids, and must add them up.
    if (i === SUBMISSIONS / 2) {
      statements.push(
        env.db
          .prepare(
            `INSERT INTO submissions (rowid, id, title, file, origin, width, height, submitted_at, submitted_at_epoch, format, bytes, sha256, analysis_status, enrichment_status, created_at, updated_at)
         VALUES (45000, 'sub-gap', '서울 야경 gap', 'images/sub-gap.jpg', 'quick', 10, 10, '2026-11-20 09:30', 1790000500, 'jpeg', 1, ?, 'pending', 'pending', ?, ?)`,
          )
          .bind('a'.repeat(64), now, now),
      );
    }
    statements.push(
      upsertSubmissionStatement(
        env.db,
        {
          id,
          title: `${pick(['서울 야경', 'festival crowd', 'Studio Portrait', '제품 사진'])} ${i}`,
          file: `images/${id}.jpg`,
          origin: 'quick',
          submitted_at: '2026-11-20 09:30',
          submitted_at_epoch: 1_790_000_000 + Math.floor(random() * 1000),
          width: 10,
          height: 10,
          format: 'jpeg',
          bytes: 1,
          sha256: 'a'.repeat(64),
        },
        now,
      ),
    );
  }
  await env.db.batch(statements);
  const evidenceIds: string[] = [];
  for (let i = 0; i < SUBMISSIONS; i += 7) {
    const added = await addEvidence(env.db, `sub-${i}`, random() < 0.3 ? [attentionMatch(`ke_${i}`), webMatch()] : [webMatch()], now);
    evidenceIds.push(...added.filter((e) => e.group === 'attention').map((e) => e.id));
  }
  const changes = [];
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < SUBMISSIONS; i += 1 + Math.floor(random() * 4)) {
      const id = `sub-${i}`;
      const score = Math.floor(random() * 101);
      changes.push(saveRiskStatement(env.db, id, { score, level: score >= 60 ? 'high' : score >= 30 ? 'medium' : 'low', signals: [] }, now));
      if (random() < 0.3) changes.push(saveDecisionStatement(env.db, id, pick(DECISIONS), null, now));
      if (random() < 0.1) changes.push(env.db.prepare('UPDATE submissions SET decision = NULL WHERE id = ?').bind(id));
      changes.push(env.db.prepare('UPDATE submissions SET enrichment_status = ? WHERE id = ?').bind(pick(ENRICHMENT), id));
    }
  }
  for (const id of evidenceIds) if (random() < 0.4) changes.push(setEvidenceStatusStatement(env.db, id, pick(['오탐', '무관', '판단에 사용'] as const)));
  await env.db.batch(changes);
}

/** The queue as a plain query over every row would answer it. */
async function byHand(filter: Omit<QueueFilter, 'limit' | 'offset'>): Promise<string[]> {
  const where: string[] = [];
  const params: SqlValue[] = [];
  if (filter.decision === 'undecided') where.push('decision IS NULL');
  else if (filter.decision) where.push('decision = ?') && params.push(filter.decision);
  if (filter.level) where.push('risk_level = ?') && params.push(filter.level);
  if (filter.enrichment) where.push('enrichment_status = ?') && params.push(filter.enrichment);
  if (filter.attention !== undefined) {
    where.push(
      `${filter.attention ? '' : 'NOT '}EXISTS (SELECT 1 FROM evidence e WHERE e.submission_id = s.id AND e.group_key = 'attention' AND (e.status IS NULL OR e.status = '판단에 사용'))`,
    );
  }
  if (filter.q) where.push('(instr(lower(s.id), lower(?)) > 0 OR instr(lower(s.title), lower(?)) > 0)') && params.push(filter.q, filter.q);
  const rows = await env.db
    .prepare(
      `SELECT id FROM submissions s ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY decision IS NOT NULL, risk_score DESC, submitted_at_epoch DESC, id`,
    )
    .bind(...params)
    .all<{ id: string }>();
  return rows.results.map((r) => r.id);
}

async function walk(filter: Omit<QueueFilter, 'limit' | 'offset'>, limit: number): Promise<{ ids: string[]; totals: number[] }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await listQueue(env.db, { ...filter, limit, offset: 0, cursor });
    ids.push(...page.items.map((s) => s.id));
    totals.push(page.total);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return { ids, totals };
}

describe('the review queue over thousands of submissions', () => {
  it('every filter combination: exact total, the same order as a full sort, every row once through the cursor', async () => {
    await seedAndChurn();
    const filters: Omit<QueueFilter, 'limit' | 'offset'>[] = [{}];
    for (const decision of [undefined, 'undecided', ...DECISIONS] as const) {
      for (const level of [undefined, ...RISK_LEVELS]) {
        for (const attention of [undefined, true, false]) filters.push({ decision, level, attention });
      }
    }
    for (const enrichment of ENRICHMENT) filters.push({ enrichment }, { enrichment, decision: 'undecided' });
    for (const filter of filters) {
      const expected = await byHand(filter);
      const first = await listQueue(env.db, { ...filter, limit: 50, offset: 0 });
      expect(first.total, JSON.stringify(filter)).toBe(expected.length);
      expect(first.items.map((s) => s.id)).toEqual(expected.slice(0, 50));
    }
    const all = await walk({}, 200);
    expect(all.ids).toEqual(await byHand({}));
    expect(new Set(all.totals)).toEqual(new Set([SUBMISSIONS + 1])); // and sub-gap
    const offsetPage = await listQueue(env.db, { limit: 25, offset: 2000 });
    expect(offsetPage.items.map((s) => s.id)).toEqual(all.ids.slice(2000, 2025));
  });

  it('search: a rare term, a common one (read in queue order), one or two characters, with filters, all as a full scan finds them', async () => {
    await seedAndChurn();
    for (const q of [
      'sub-1234',
      'sub-12',
      'sub-',
      'SUB-1',
      '야경 1',
      'festival',
      'FESTIVAL CROWD',
      'studio',
      '야경',
      '9',
      'portrait 25',
      '%',
      '_',
      // One or two characters, from the index of characters and pairs: common (every id), rare, upper case, with a space.
      'su',
      'B-',
      '진',
      'U',
      '경 ',
      '1%',
    ]) {
      for (const extra of [{}, { decision: 'undecided' as const }, { level: 'high' as const, attention: false }]) {
        const expected = await byHand({ q, ...extra });
        const { ids, totals } = await walk({ q, ...extra }, 100);
        expect(ids, `${q} ${JSON.stringify(extra)}`).toEqual(expected);
        expect(totals.every((t) => t === expected.length)).toBe(true);
      }
    }
  });
});
