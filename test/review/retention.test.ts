import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runRetention } from '../../lib/review/retention.js';
import { saveDerivedPath } from '../../lib/repo/submissions.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { body, seedSubmission, webMatch } from './seed.js';

let env: TestEnv;
beforeEach(async () => {
  env = await createTestEnv({ SVC_EVIDENCE_RETENTION_DAYS: '30' });
});
afterEach(async () => env.dispose());

const DAY = 24 * 60 * 60 * 1000;

function writeMedia(relative: string, ageDays = 0): string {
  const file = join(env.dataDir, relative);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, 'image bytes');
  const at = new Date(env.clock.now().getTime() - ageDays * DAY);
  utimesSync(file, at, at);
  return file;
}

/** A submission analysed now (derived image) with one downloaded evidence image. */
async function seedWithMedia(id: string) {
  const derived = writeMedia(`derived/${id}.jpg`);
  const downloaded = writeMedia(`evidence/${id}/result.jpg`);
  const [evidence] = await seedSubmission(env, id, { evidence: [{ ...webMatch(), local_media_path: `evidence/${id}/result.jpg` }] });
  await saveDerivedPath(env.db, id, `derived/${id}.jpg`, env.clock.now().toISOString());
  return { derived, downloaded, evidence };
}

describe('retention', () => {
  it('deletes downloaded and derived images older than the retention days, keeping the records', async () => {
    const old = await seedWithMedia('old');
    env.clock.advance(20 * DAY);
    const fresh = await seedWithMedia('fresh');
    env.clock.advance(11 * DAY);

    const report = await body(env.call('POST', '/api/retention/run'));
    expect(report).toEqual({
      retention_days: 30,
      cutoff: new Date(env.clock.now().getTime() - 30 * DAY).toISOString(),
      evidence_images: 1,
      derived_images: 1,
      unreferenced_files: 0,
      failed_files: 0,
    });
    expect(existsSync(old.downloaded)).toBe(false);
    expect(existsSync(old.derived)).toBe(false);
    expect(existsSync(fresh.downloaded)).toBe(true);
    expect(existsSync(fresh.derived)).toBe(true);

    const review = await body(env.call('GET', '/api/submissions/old/review'));
    expect(review.evidence).toHaveLength(1);
    expect(review.evidence[0]).toMatchObject({ id: old.evidence.id, local_media_url: null, image_url: 'https://pages.example/photo.jpg', matched: true });
    const derived = await env.db.prepare('SELECT id, derived_path FROM submissions ORDER BY id').all();
    expect(derived.results).toEqual([
      { id: 'fresh', derived_path: 'derived/fresh.jpg' },
      { id: 'old', derived_path: null },
    ]);
    expect((await body(env.call('GET', '/api/submissions/fresh/review'))).evidence[0].local_media_url).toBe('/media/evidence/fresh/result.jpg');
    const served = await env.call('GET', '/media/evidence/old/result.jpg');
    expect(served.status).toBe(404);
  });

  it('writes a retention.run audit event with the counts', async () => {
    await seedWithMedia('old');
    env.clock.advance(31 * DAY);
    const report = await body(env.call('POST', '/api/retention/run'));
    const { events } = await body(env.call('GET', '/api/audit-events'));
    expect(events[0]).toMatchObject({ action: 'retention.run', target_type: 'retention', target_id: null, details: report });
  });

  it('removes old files no record points to (face crops, leftovers) but never referenced or young ones', async () => {
    const kept = await seedWithMedia('kept');
    const crop = writeMedia('derived/crops/face-1.jpg', 45);
    const leftover = writeMedia('evidence/orphan.png', 31);
    const young = writeMedia('evidence/just-downloaded.png', 1);
    // A referenced file keeps its record's own age, whatever the file's time says.
    utimesSync(kept.downloaded, new Date(0), new Date(0));
    const submissionImage = writeMedia('submissions/images/own.png', 400);

    const report = await runRetention(env);
    expect(report).toMatchObject({ evidence_images: 0, derived_images: 0, unreferenced_files: 2, failed_files: 0 });
    expect(existsSync(crop)).toBe(false);
    expect(existsSync(leftover)).toBe(false);
    expect(existsSync(young)).toBe(true);
    expect(existsSync(kept.downloaded)).toBe(true);
    expect(existsSync(kept.derived)).toBe(true);
    expect(existsSync(submissionImage)).toBe(true);
  });

  it('clears the record even when its file is already gone, and a second run finds nothing', async () => {
    const old = await seedWithMedia('old');
    env.clock.advance(31 * DAY);
    await import('node:fs/promises').then((fs) => fs.unlink(old.downloaded));
    expect(await runRetention(env)).toMatchObject({ evidence_images: 1, derived_images: 1, failed_files: 0 });
    expect(await runRetention(env)).toMatchObject({ evidence_images: 0, derived_images: 0, unreferenced_files: 0 });
  });

  it('keeps a derived image that a newer analysis replaced after the old one expired', async () => {
    await seedWithMedia('s1');
    env.clock.advance(31 * DAY);
    // The submission is analysed again: same path, new file and time.
    const renewed = writeMedia('derived/s1.jpg');
    await saveDerivedPath(env.db, 's1', 'derived/s1.jpg', env.clock.now().toISOString());
    expect(await runRetention(env)).toMatchObject({ derived_images: 0 });
    expect(existsSync(renewed)).toBe(true);
  });

  it('never deletes outside the evidence and derived folders, whatever a record says', async () => {
    await seedSubmission(env, 's1', {
      evidence: [
        { ...webMatch(), local_media_path: 'evidence/../submissions/images/s1.png' },
        { source: 'internal', kind: 'similar_submission', group: 'internal', local_media_path: 'images/other.png', matched_submission_id: 'other' },
      ],
    });
    const own = writeMedia('submissions/images/s1.png', 400);
    const other = writeMedia('submissions/images/other.png', 400);
    await env.db.prepare("UPDATE evidence SET local_media_created_at = '2000-01-01T00:00:00.000Z'").run();
    await runRetention(env);
    expect(existsSync(own)).toBe(true);
    expect(existsSync(other)).toBe(true);
  });
});
