import type { z } from 'zod';
import type { RetentionReportRecord } from '../api/records.js';
import { checkedKey, listAll } from '../blobs/types.js';
import { DERIVED_AREA, EVIDENCE_AREA } from '../blobs/keys.js';
import { auditStatement } from '../repo/audit.js';
import { clearExpiredMediaStatement, type ExpiredMedia, listExpiredMedia, listReferencedMedia, RETAINED_MEDIA, type RetainedMedia } from '../repo/retention.js';
import type { Env } from '../ports.js';

export type RetentionReport = z.infer<typeof RetentionReportRecord>;

const DAY_MS = 24 * 60 * 60 * 1000;
const SWEPT = [EVIDENCE_AREA, DERIVED_AREA];

/** A stored media path as a key under evidence/ or derived/; anything else is never deleted. */
function retainedKey(stored: string): string | null {
  if (!SWEPT.some((prefix) => stored.startsWith(prefix))) return null;
  try {
    return checkedKey(stored);
  } catch {
    return null;
  }
}

/** Deletes an object; false when it could not be deleted. */
async function removeObject(env: Env, key: string): Promise<boolean> {
  try {
    await env.blobs.delete(key);
    return true;
  } catch {
    return false;
  }
}

/** `cleared[i]` says whether statement i changed its row (D1 and better-sqlite3 both report it). */
const changedRows = (results: unknown[]) => results.map((r) => ((r as { meta?: { changes?: number } }).meta?.changes ?? 0) > 0);

/**
 * Deletes downloaded evidence images, page captures and derived images older than
 * SVC_EVIDENCE_RETENTION_DAYS. A decided case, or one whose entry is an attention candidate or on
 * the watchlist, keeps its page captures: they are the proof a rights team acts on. Records are
 * kept; their media pointer is cleared first and the file deleted after, so a crash in between
 * leaves only an unreferenced file, which a later run removes by its age. The count of captures
 * deleted is in the audit event (the answer's record predates captures).
 */
export async function runRetention(env: Env): Promise<RetentionReport> {
  const { db } = env;
  const days = env.config.SVC_EVIDENCE_RETENTION_DAYS;
  const nowDate = env.clock.now();
  const now = nowDate.toISOString();
  const cutoffMs = nowDate.getTime() - days * DAY_MS;
  const cutoff = new Date(cutoffMs).toISOString();

  const expired: { kind: RetainedMedia; media: ExpiredMedia }[] = [];
  for (const kind of RETAINED_MEDIA) for (const media of await listExpiredMedia(db, kind, cutoff)) expired.push({ kind, media });
  const cleared = expired.length ? changedRows(await db.batch(expired.map(({ kind, media }) => clearExpiredMediaStatement(db, kind, media, cutoff)))) : [];
  const clearedOf = (kind: RetainedMedia) => expired.filter((e, i) => cleared[i] && e.kind === kind).length;
  // Files are named by their hash, so one file can back several records (the same page captured
  // twice, the same image found by two searches): it goes only when no record points to it.
  const pointedTo: string[] = [];
  for (const kind of RETAINED_MEDIA) pointedTo.push(...(await listReferencedMedia(db, kind)));
  const referenced = new Set(pointedTo.flatMap((stored) => retainedKey(stored) ?? []));
  const failed: string[] = [];
  for (const { media } of expired.filter((_, i) => cleared[i])) {
    const key = retainedKey(media.path);
    if (key && !referenced.has(key) && !(await removeObject(env, key))) failed.push(media.path);
  }

  let unreferenced = 0;
  for (const prefix of SWEPT) {
    for await (const object of listAll(env.blobs, prefix)) {
      if (referenced.has(object.key) || object.modified >= cutoffMs) continue;
      if (await removeObject(env, object.key)) unreferenced += 1;
      else failed.push(object.key);
    }
  }
  if (failed.length) env.log.warn('retention could not delete some files', { files: failed.slice(0, 20), count: failed.length });

  const report: RetentionReport = {
    retention_days: days,
    cutoff,
    evidence_images: clearedOf('evidence'),
    derived_images: clearedOf('derived'),
    unreferenced_files: unreferenced,
    failed_files: failed.length,
  };
  await auditStatement(
    db,
    { action: 'retention.run', target_type: 'retention', target_id: null, details: { ...report, page_captures: clearedOf('captures') } },
    now,
    env.actor,
  ).run();
  return report;
}
