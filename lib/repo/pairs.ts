import { rowsOf } from './columns.js';
import type { MatchFields } from './evidence.js';
import type { Database, Statement } from '../ports.js';

/**
 * The verdict on a pair of submissions (migration 0022, decision 0033), judged once for the bytes
 * of both sides: the internal matches of each side are derived from its pairs.
 */
export interface PairVerdict {
  /** The smaller id. */
  a: string;
  b: string;
  a_sha256: string;
  b_sha256: string;
  /** The pHash threshold it was judged at (null: carried over from before the pairs were kept). */
  threshold: number | null;
  matched: boolean;
  /** The plain pHash similarity of the two. */
  similarity: number;
  /** The match as the evidence of `a` shows it (a the submission, b the candidate); null when not matched. */
  a_view: MatchFields | null;
  b_view: MatchFields | null;
}

interface PairRow extends Omit<PairVerdict, 'matched' | 'a_view' | 'b_view'> {
  matched: number;
  a_view: string | null;
  b_view: string | null;
}

/** Every pair verdict kept for the submission, for whatever bytes; `pairsOf` reads its answer. */
export function pairsOfStatement(db: Database, id: string): Statement {
  return db.prepare('SELECT * FROM submission_pairs WHERE a = ? UNION ALL SELECT * FROM submission_pairs WHERE b = ?').bind(id, id);
}

/** Every pair verdict kept for the submission, for whatever bytes. */
export async function listPairsOf(db: Database, id: string): Promise<PairVerdict[]> {
  return pairsOf(await pairsOfStatement(db, id).all());
}

/** The verdicts a pairsOfStatement answered. */
export function pairsOf(result: unknown): PairVerdict[] {
  return rowsOf<PairRow>(result).map((row) => ({
    ...row,
    matched: row.matched === 1,
    a_view: row.a_view ? (JSON.parse(row.a_view) as MatchFields) : null,
    b_view: row.b_view ? (JSON.parse(row.b_view) as MatchFields) : null,
  }));
}

/**
 * Pairs per statement: a verdict with both matched regions is about 600 bytes of JSON, and D1
 * refuses statements over 100 KB.
 */
const PAIRS_PER_STATEMENT = 50;

/**
 * Stores verdicts, each only while both sides are still analysed from the bytes it was judged on:
 * a comparison that read older bytes of either side never overwrites the verdict on newer ones.
 */
export function writePairsStatements(db: Database, pairs: PairVerdict[]): Statement[] {
  const statements: Statement[] = [];
  for (let at = 0; at < pairs.length; at += PAIRS_PER_STATEMENT) {
    const page = pairs.slice(at, at + PAIRS_PER_STATEMENT).map((p) => ({ ...p, matched: p.matched ? 1 : 0 }));
    statements.push(
      db
        .prepare(
          `INSERT INTO submission_pairs (a, b, a_sha256, b_sha256, threshold, matched, similarity, a_view, b_view)
           SELECT json_extract(p.value, '$.a'), json_extract(p.value, '$.b'), json_extract(p.value, '$.a_sha256'), json_extract(p.value, '$.b_sha256'),
             json_extract(p.value, '$.threshold'), json_extract(p.value, '$.matched'), json_extract(p.value, '$.similarity'),
             json_extract(p.value, '$.a_view'), json_extract(p.value, '$.b_view')
           FROM json_each(?) p
           WHERE EXISTS (SELECT 1 FROM submissions s WHERE s.id = json_extract(p.value, '$.a') AND s.sha256 = json_extract(p.value, '$.a_sha256') AND s.analysis_status = 'done')
             AND EXISTS (SELECT 1 FROM submissions s WHERE s.id = json_extract(p.value, '$.b') AND s.sha256 = json_extract(p.value, '$.b_sha256') AND s.analysis_status = 'done')
           ON CONFLICT (a, b) DO UPDATE SET a_sha256 = excluded.a_sha256, b_sha256 = excluded.b_sha256, threshold = excluded.threshold,
             matched = excluded.matched, similarity = excluded.similarity, a_view = excluded.a_view, b_view = excluded.b_view`,
        )
        .bind(JSON.stringify(page)),
    );
  }
  return statements;
}

/**
 * Drops the submission's verdicts that no longer hold for it: judged on other bytes than it has
 * now analysed, or at another threshold. A verdict on its current bytes stays, whoever wrote it.
 */
export function dropStalePairsStatement(db: Database, id: string, threshold: number): Statement {
  return db
    .prepare(
      `WITH target AS (SELECT ? AS id, ? AS threshold),
         me AS (SELECT s.sha256 FROM submissions s, target WHERE s.id = target.id AND s.analysis_status = 'done')
       DELETE FROM submission_pairs
       WHERE (a = (SELECT id FROM target) AND (a_sha256 IS NOT (SELECT sha256 FROM me) OR threshold IS NOT (SELECT threshold FROM target)))
          OR (b = (SELECT id FROM target) AND (b_sha256 IS NOT (SELECT sha256 FROM me) OR threshold IS NOT (SELECT threshold FROM target)))`,
    )
    .bind(id, threshold);
}

/**
 * The submission's matched pairs that hold for the bytes both sides have now analysed: the other
 * side, the plain pHash similarity and the match as this side's evidence shows it. With `about`,
 * only the pair with that one other submission (bound after the submission's id).
 */
const currentMatches = (about: boolean) => {
  const other = (side: 'a' | 'b') => (about ? ` AND p.${side} = (SELECT about FROM target)` : '');
  return `WITH target AS (SELECT ? AS id${about ? ', ? AS about' : ''}),
  mine AS (
    SELECT p.b AS other, p.similarity, p.a_view AS view, p.a_sha256 AS own_sha256, p.b_sha256 AS other_sha256
    FROM submission_pairs p WHERE p.a = (SELECT id FROM target) AND p.matched = 1${other('b')}
    UNION ALL
    SELECT p.a, p.similarity, p.b_view, p.b_sha256, p.a_sha256 FROM submission_pairs p WHERE p.b = (SELECT id FROM target) AND p.matched = 1${other('a')}
  ),
  found_matches AS (
    SELECT m.other, m.similarity, m.view, o.title, o.file FROM mine m
    JOIN submissions me ON me.id = (SELECT id FROM target) AND me.sha256 = m.own_sha256 AND me.analysis_status = 'done'
    JOIN submissions o ON o.id = m.other AND o.sha256 = m.other_sha256 AND o.analysis_status = 'done'
  )`;
};

/**
 * The submission's internal evidence made to show its current matched pairs, in one batch (one
 * transaction): a pair written meanwhile is either wholly in it or comes with its own rebuild. A
 * match found again keeps its row (id, operator mark, first-seen time) and takes the pair's figures;
 * a new one gets a row; one no longer matched goes. With `about`, only its row about that other
 * submission: what a comparison of `about` can change in a partner's evidence, since it writes no
 * pair but its own (rebuilding each partner whole made a copy group's comparisons grow with the
 * square of its size).
 */
export function internalEvidenceStatements(db: Database, id: string, now: string, about?: string): Statement[] {
  const matches = currentMatches(about !== undefined);
  const target = about === undefined ? [id] : [id, about];
  const stale =
    about === undefined
      ? '(matched_submission_id IS NULL OR matched_submission_id NOT IN (SELECT other FROM found_matches))'
      : 'matched_submission_id = (SELECT about FROM target) AND matched_submission_id NOT IN (SELECT other FROM found_matches)';
  return [
    db
      .prepare(
        `${matches}
         DELETE FROM evidence WHERE submission_id = (SELECT id FROM target) AND group_key = 'internal' AND ${stale}`,
      )
      .bind(...target),
    db
      .prepare(
        `${matches}
         UPDATE evidence SET kind = 'submission_match', title = c.title, local_media_path = c.file, similarity = c.similarity, matched = 1,
           match_transform = json_extract(c.view, '$.match_transform'), match_similarity = json_extract(c.view, '$.match_similarity'),
           match_inliers = json_extract(c.view, '$.match_inliers'), match_region = json_extract(c.view, '$.match_region'),
           confidence = json_extract(c.view, '$.match_similarity')
         FROM found_matches c
         WHERE evidence.submission_id = (SELECT id FROM target) AND evidence.group_key = 'internal' AND evidence.matched_submission_id = c.other`,
      )
      .bind(...target),
    db
      .prepare(
        `${matches}
         INSERT INTO evidence (id, submission_id, source, kind, group_key, title, local_media_path, similarity, matched, match_transform,
           match_similarity, match_inliers, match_region, confidence, matched_submission_id, created_at)
         SELECT 'ev_' || lower(hex(randomblob(10))), (SELECT id FROM target), 'internal', 'submission_match', 'internal', c.title, c.file, c.similarity, 1,
           json_extract(c.view, '$.match_transform'), json_extract(c.view, '$.match_similarity'), json_extract(c.view, '$.match_inliers'),
           json_extract(c.view, '$.match_region'), json_extract(c.view, '$.match_similarity'), c.other, ?
         FROM found_matches c
         WHERE NOT EXISTS (
           SELECT 1 FROM evidence e WHERE e.submission_id = (SELECT id FROM target) AND e.group_key = 'internal' AND e.matched_submission_id = c.other
         )`,
      )
      .bind(...target, now),
  ];
}

/**
 * The submissions whose internal evidence a change to this one's pairs may touch: those its
 * evidence or theirs links, and those any kept pair matches, for whatever bytes. A statement, so
 * that it goes in the batch of the writes it comes before or after; `partnersOf` reads its answer.
 */
export function pairPartnersStatement(db: Database, id: string): Statement {
  return db
    .prepare(
      `WITH target AS (SELECT ? AS id)
       SELECT submission_id AS other FROM evidence WHERE group_key = 'internal' AND matched_submission_id = (SELECT id FROM target)
       UNION SELECT matched_submission_id FROM evidence WHERE group_key = 'internal' AND submission_id = (SELECT id FROM target)
       UNION SELECT b FROM submission_pairs WHERE a = (SELECT id FROM target) AND matched = 1
       UNION SELECT a FROM submission_pairs WHERE b = (SELECT id FROM target) AND matched = 1`,
    )
    .bind(id);
}

/** The partners of `id` a pairPartnersStatement answered. */
export function partnersOf(id: string, result: unknown): string[] {
  return rowsOf<{ other: string | null }>(result).flatMap((r) => (r.other && r.other !== id ? [r.other] : []));
}
