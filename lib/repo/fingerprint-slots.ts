import { setImmediate as nextTurn } from 'node:timers/promises';
import { indexEntries, type Fingerprints, type SlotProbe } from '../images/robust.js';
import { rowsOf } from './columns.js';
import type { Database, Statement } from '../ports.js';

/** Slots read per statement, so that no statement binds a very long array: a match lookup is one statement, the near-threshold lookup (2,788 slots at 0.8) four. */
const SLOTS_PER_STATEMENT = 700;

/** An analysed submission's stored fingerprints, as the similarity check reads them. */
export interface FingerprintRow {
  id: string;
  phash: string;
  fingerprints: string | null;
}

/** Replaces the submission's slots with those of its fingerprints (none: it is taken out of the index). */
export function fingerprintSlotsStatements(db: Database, id: string, fingerprints: Fingerprints | null): Statement[] {
  const remove = db.prepare('DELETE FROM fingerprint_slots WHERE submission_id = ?').bind(id);
  if (!fingerprints) return [remove];
  return [remove, insertSlotsStatement(db, [[id, fingerprints]])];
}

/** One statement for many submissions' rows, bound as one JSON array (D1 allows 100 bound values). */
function insertSlotsStatement(db: Database, submissions: [string, Fingerprints][]): Statement {
  const rows = submissions.flatMap(([id, fingerprints]) => indexEntries(fingerprints).map(([slot, key]) => [slot, id, key]));
  return db
    .prepare(
      `INSERT OR IGNORE INTO fingerprint_slots (slot, submission_id, key)
       SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?)`,
    )
    .bind(JSON.stringify(rows));
}

/** A submission a lookup found: its fingerprints, and the file and bytes (SHA-256) they were computed from. */
export interface CandidateRow extends FingerprintRow {
  file: string;
  sha256: string | null;
}

/**
 * The analysed submissions (other than `except`) its lookups find: the rows of each lookup's slots
 * whose whole key is within its distance, then those submissions' fingerprints; every analysed
 * submission when a lookup is too wide to probe (null). Only analysed rows: a submission waiting for
 * new analysis may still have its old picture's slots.
 */
export async function submissionsFound(db: Database, probes: (SlotProbe | null)[], except: string): Promise<CandidateRow[]> {
  if (probes.some((probe) => probe === null)) {
    const all = db.prepare(`SELECT id, phash, fingerprints, file, sha256 FROM submissions WHERE analysis_status = 'done' AND phash IS NOT NULL AND id <> ?`);
    return (await all.bind(except).all<CandidateRow>()).results;
  }
  const pieces: { probe: SlotProbe; statement: Statement }[] = [];
  for (const probe of probes as SlotProbe[]) {
    for (let at = 0; at < probe.slots.length; at += SLOTS_PER_STATEMENT) {
      const statement = db
        .prepare(
          'SELECT f.slot, f.submission_id AS id, f.key FROM json_each(?) probe JOIN fingerprint_slots f ON f.slot = probe.value WHERE f.submission_id <> ?',
        )
        .bind(JSON.stringify(probe.slots.slice(at, at + SLOTS_PER_STATEMENT)), except);
      pieces.push({ probe, statement });
    }
  }
  // Every lookup's pieces in one batch: on D1 one round trip where each piece was one (decisions 0054,
  // 0056). On SQLite they run in one go, the near lookup about 20 ms at 100,000 submissions (decision
  // 0024), where the event loop used to run between pieces.
  const ids = new Set<string>();
  const answers = await db.batch(pieces.map((piece) => piece.statement));
  answers.forEach((hits, i) => {
    for (const hit of rowsOf<{ slot: number; id: string; key: string }>(hits)) if (pieces[i].probe.accepts(hit.slot, hit.key)) ids.add(hit.id);
  });
  if (ids.size === 0) return [];
  const rows = await db
    // "+" keeps the planner off the analysis-status index, which holds nearly every row.
    .prepare(
      `SELECT s.id, s.phash, s.fingerprints, s.file, s.sha256 FROM json_each(?) j JOIN submissions s ON s.id = j.value
       WHERE +s.analysis_status = 'done' AND s.phash IS NOT NULL`,
    )
    .bind(JSON.stringify([...ids]))
    .all<CandidateRow>();
  return rows.results;
}

/**
 * Submissions per page of the backfill (320 rows, one statement). Each row lands on a random page
 * of the table, so a page's cost is its rows: at 100,000 submissions 34 ms on average on the
 * shared machine (100 per page held the event loop 300-870 ms). 100 pages (300 queries) fit one
 * Worker invocation.
 */
const BACKFILL_PAGE = 10;
const BACKFILL_PAGES = 100;

/**
 * Writes the slots of submissions compared before the index moved into the database (migration
 * 0014), a page at a time from the cursor it keeps, for at most `pages` pages; true once none is
 * left (the cursor row is gone). Each page commits with its cursor, so an interrupted backfill
 * resumes where it stopped.
 */
export async function backfillFingerprintSlots(
  db: Database,
  fingerprintsOf: (row: FingerprintRow) => Fingerprints,
  { page = BACKFILL_PAGE, pages = BACKFILL_PAGES } = {},
): Promise<boolean> {
  const cursor = await db.prepare('SELECT after FROM fingerprint_slots_backfill').first<{ after: string }>();
  if (!cursor) return true;
  let { after } = cursor;
  for (let run = 0; run < pages; run++) {
    if (run > 0) await nextTurn();
    const rows = (
      await db
        .prepare(`SELECT id, phash, fingerprints FROM submissions WHERE id > ? AND +analysis_status = 'done' AND phash IS NOT NULL ORDER BY id LIMIT ?`)
        .bind(after, page)
        .all<FingerprintRow>()
    ).results;
    const done = rows.length < page;
    const moveCursor = done
      ? db.prepare('DELETE FROM fingerprint_slots_backfill')
      : db.prepare('UPDATE fingerprint_slots_backfill SET after = ?').bind(rows[rows.length - 1].id);
    const indexed = rows.map((row): [string, Fingerprints] => [row.id, fingerprintsOf(row)]);
    await db.batch(rows.length > 0 ? [insertSlotsStatement(db, indexed), moveCursor] : [moveCursor]);
    if (done) return true;
    after = rows[rows.length - 1].id;
  }
  return false;
}
