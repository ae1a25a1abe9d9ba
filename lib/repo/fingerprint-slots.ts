import type { Database, Statement } from '../db/types.js';
import { indexSlots, type Fingerprints } from '../images/robust.js';

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
  return [remove, insertSlotsStatement(db, { [id]: indexSlots(fingerprints) })];
}

/** One statement for many submissions' slots, bound as one JSON object (D1 allows 100 bound values). */
function insertSlotsStatement(db: Database, slots: Record<string, number[]>): Statement {
  return db
    .prepare(
      `INSERT OR IGNORE INTO fingerprint_slots (slot, submission_id)
       SELECT slot.value, submission.key FROM json_each(?) submission, json_each(submission.value) slot`,
    )
    .bind(JSON.stringify(slots));
}

/**
 * Analysed submissions (other than `except`) stored under any of the slots; every analysed
 * submission when `slots` is null (a lookup too wide to probe). Only analysed rows: a submission
 * waiting for new analysis may still have its old picture's slots.
 */
export async function submissionsInSlots(db: Database, slots: number[] | null, except: string): Promise<FingerprintRow[]> {
  const statement = slots
    ? db
        .prepare(
          `SELECT id, phash, fingerprints FROM submissions
           WHERE id IN (SELECT f.submission_id FROM json_each(?) probe JOIN fingerprint_slots f ON f.slot = probe.value)
             AND analysis_status = 'done' AND phash IS NOT NULL AND id <> ?`,
        )
        .bind(JSON.stringify(slots), except)
    : db.prepare(`SELECT id, phash, fingerprints FROM submissions WHERE analysis_status = 'done' AND phash IS NOT NULL AND id <> ?`).bind(except);
  return (await statement.all<FingerprintRow>()).results;
}

/** Submissions compared per page of the backfill: 500 x at most 36 slots is one ~150 KB bound value. */
const BACKFILL_PAGE = 500;

/**
 * Writes the slots of submissions compared before the index moved into the database (migration
 * 0014), a page at a time from the cursor it keeps, until none is left; a no-op afterwards. Each
 * page commits with its cursor, so an interrupted backfill resumes where it stopped.
 */
export async function backfillFingerprintSlots(db: Database, fingerprintsOf: (row: FingerprintRow) => Fingerprints, page = BACKFILL_PAGE): Promise<number> {
  let written = 0;
  for (;;) {
    const cursor = await db.prepare('SELECT after FROM fingerprint_slots_backfill').first<{ after: string }>();
    if (!cursor) return written;
    const rows = (
      await db
        .prepare(`SELECT id, phash, fingerprints FROM submissions WHERE id > ? AND analysis_status = 'done' AND phash IS NOT NULL ORDER BY id LIMIT ?`)
        .bind(cursor.after, page)
        .all<FingerprintRow>()
    ).results;
    const moveCursor =
      rows.length < page
        ? db.prepare('DELETE FROM fingerprint_slots_backfill')
        : db.prepare('UPDATE fingerprint_slots_backfill SET after = ?').bind(rows[rows.length - 1].id);
    const slots = Object.fromEntries(rows.map((row) => [row.id, indexSlots(fingerprintsOf(row))]));
    await db.batch(rows.length > 0 ? [insertSlotsStatement(db, slots), moveCursor] : [moveCursor]);
    written += rows.length;
  }
}
