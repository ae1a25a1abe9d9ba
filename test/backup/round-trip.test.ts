import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useFakeProviders } from '../helpers/fake-world.js';
import { copyFixture, FIXTURE_NAMES, fixturePath, reencoded } from '../helpers/fixtures.js';
import { adminClient, useTestServer } from '../helpers/server.js';
import { folderHashes, runScript, sha256 } from './helpers.js';

/**
 * A backup taken as it will be needed: `npm run backup`, in its own process, while 8 reviewers mark
 * evidence and decide, new files are reloaded and their analyses and enrichments run; then restored
 * into a new folder and compared with the service's own data.
 */

const fakes = useFakeProviders();
const running = useTestServer(() => ({ settings: fakes.settings }));
const scratch = mkdtempSync(join(tmpdir(), 'svc-backup-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const CLIENTS = 8;
const DECISIONS = ['승인', '보류', '반려'] as const;
const STATUSES = ['판단에 사용', '무관', '오탐', '보류'] as const;

beforeAll(async () => {
  const { web, vision } = fakes;
  // Every fixture is "on the web" with a page showing it: each submission's enrichment downloads
  // the copy that matches it and captures its page, so evidence/ fills with files.
  for (const name of FIXTURE_NAMES) {
    web.addImage(`/img/${name}`, readFileSync(fixturePath(name)), name.endsWith('.jpg') ? 'image/jpeg' : 'image/png');
    web.addPage(`/page/${name}`, `<html><head><title>${name}</title></head><body><img src="/img/${name}"></body></html>`);
  }
  vision.detection = {
    pagesWithMatchingImages: FIXTURE_NAMES.map((name) => ({
      url: web.urlFor(`/page/${name}`),
      pageTitle: name,
      fullMatchingImages: [{ url: web.urlFor(`/img/${name}`) }],
    })),
  };
  const images = join(running.dataDir, 'submissions', 'images');
  for (const name of FIXTURE_NAMES) copyFixture(name, images, `first-${name}`);
  await running.api('POST', '/api/submissions/reload');
  await settled();
}, 120_000);

/** Waits until no job is queued or running. */
async function settled(): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (!(await running.api('GET', '/api/jobs/progress')).active) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('jobs did not settle');
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];

/**
 * A reviewer with a token of their own: opens cases from the queue, marks evidence, decides, with a
 * moment between cases, until told to stop; told to slow down (429), waits and goes on.
 */
async function reviewer(n: number, stop: { now: boolean }): Promise<number> {
  const { secret } = await running.api('POST', '/api/tokens', { name: `reviewer ${n}`, role: 'operator' });
  const client = adminClient(() => running.url, secret);
  const api = async (method: string, path: string, body?: unknown) => {
    for (;;) {
      try {
        return await client.api(method, path, body);
      } catch (error) {
        if (!/: 429 /.test((error as Error).message)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  };
  let actions = 0;
  while (!stop.now) {
    const queue = await api('GET', '/api/review-queue?limit=50');
    // Cases still being analysed cannot be held yet: reviewers open the analysed ones.
    const submission = pick((queue.items as { id: string; analysis_status: string }[]).filter((s) => s.analysis_status === 'done'));
    const review = await api('GET', `/api/submissions/${encodeURIComponent(submission.id)}/review`);
    const evidence = (review.evidence as { id: string; supporting: boolean }[]).filter((e) => !e.supporting);
    if (evidence.length) {
      await api('POST', `/api/evidence/${encodeURIComponent(pick(evidence).id)}/status`, { status: pick(STATUSES) });
      actions++;
    }
    await api('POST', `/api/submissions/${encodeURIComponent(submission.id)}/decision`, { decision: pick(DECISIONS), note: `reviewer note ${actions}` });
    actions++;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  return actions;
}

/** New files keep arriving: each reload queues an analysis, then an enrichment. */
async function arrivals(stop: { now: boolean }): Promise<number> {
  const images = join(running.dataDir, 'submissions', 'images');
  let n = 0;
  while (!stop.now) {
    writeFileSync(join(images, `later-${n}.jpg`), await reencoded(pick(FIXTURE_NAMES), 60 + (n % 35)));
    await running.api('POST', '/api/submissions/reload');
    n++;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  return n;
}

type Row = Record<string, unknown>;

it('restores everything a backup taken under load holds, consistent at one instant, every file matching its hash', async () => {
  const stop = { now: false };
  const load = Promise.all([...Array.from({ length: CLIENTS }, (_, n) => reviewer(n, stop)), arrivals(stop)]);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  // What was written and answered before the backup started must be in it.
  const before = await running.api('GET', '/api/audit-events?limit=1000');
  const submissionsBefore = (await running.api('GET', '/api/review-queue?limit=1000')).items.map((s: { id: string }) => s.id);
  const archive = join(scratch, 'under-load.tar');
  const backup = runScript('backup', [archive], { SVC_DATA_DIR: running.dataDir });
  // The backup runs while analyses and enrichments are in flight, not after them.
  expect((await running.api('GET', '/api/jobs/progress')).active).toBe(true);
  await backup;
  await new Promise((resolve) => setTimeout(resolve, 300));
  stop.now = true;
  const counts = await load;
  const actions = counts.slice(0, CLIENTS).reduce((a, b) => a + b, 0);
  expect((await backup).stderr).toBe('');
  expect((await backup).code).toBe(0);
  expect(actions).toBeGreaterThan(20);

  const restored = join(scratch, 'restored');
  const restore = await runScript('restore', [archive, '--data', restored]);
  expect(restore.stderr).toBe('');
  expect(restore.code).toBe(0);

  const copy = new Database(join(restored, 'svc.sqlite3'), { readonly: true });
  const live = new Database(join(running.dataDir, 'svc.sqlite3'), { readonly: true });
  try {
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(copy.pragma('foreign_key_check')).toEqual([]);

    // The audit trail is append-only: the copy holds exactly the live events up to its last one,
    // field for field, every event answered before the backup started among them.
    const copied = copy.prepare('SELECT * FROM audit_events ORDER BY id').all() as Row[];
    const last = copied.at(-1)!.id as number;
    expect(copied).toEqual(live.prepare('SELECT * FROM audit_events WHERE id <= ? ORDER BY id').all(last));
    const copiedIds = new Set(copied.map((e) => e.id));
    for (const event of before.events) expect(copiedIds.has(event.id)).toBe(true);
    expect(copied.filter((e) => e.action === 'submission.decision').length).toBeGreaterThan(0);
    expect(copied.filter((e) => e.action === 'evidence.status').length).toBeGreaterThan(0);

    // Every submission listed before the backup, each submitted file with the hash recorded for it.
    const submissions = copy.prepare('SELECT id, file, sha256, thumb_path, decision FROM submissions').all() as Row[];
    expect(submissions.map((s) => s.id)).toEqual(expect.arrayContaining(submissionsBefore));
    for (const s of submissions) expect(sha256(readFileSync(join(restored, 'submissions', s.file as string)))).toBe(s.sha256);

    // Decisions and knowledge entries agree inside the copy: every 보류 or 반려 has its entry.
    const held = submissions.filter((s) => s.decision === '보류' || s.decision === '반려').map((s) => s.id);
    const entries = new Set((copy.prepare('SELECT submission_id FROM knowledge_entries').all() as Row[]).map((e) => e.submission_id));
    expect(held.length).toBeGreaterThan(0);
    for (const id of held) expect(entries.has(id)).toBe(true);

    // Every file a copied row names is there: thumbnails, downloaded matches, captured pages
    // (whose bytes hash to what was recorded when they were captured).
    for (const s of submissions.filter((x) => x.thumb_path)) expect(readFileSync(join(restored, s.thumb_path as string)).length).toBeGreaterThan(0);
    const media = copy.prepare("SELECT local_media_path AS path FROM evidence WHERE local_media_path LIKE 'evidence/%'").all() as Row[];
    expect(media.length).toBeGreaterThan(0);
    for (const m of media) expect(readFileSync(join(restored, m.path as string)).length).toBeGreaterThan(0);
    const pages = copy.prepare('SELECT media_path, sha256 FROM page_captures WHERE media_path IS NOT NULL').all() as Row[];
    expect(pages.length).toBeGreaterThan(0);
    for (const p of pages) expect(sha256(readFileSync(join(restored, p.media_path as string)))).toBe(p.sha256);
  } finally {
    copy.close();
    live.close();
  }

  // Every restored file is byte for byte the service's own (files are never rewritten in place).
  const liveFiles = folderHashes(running.dataDir);
  const restoredFiles = folderHashes(restored);
  restoredFiles.delete('svc.sqlite3');
  expect(restoredFiles.size).toBeGreaterThan(FIXTURE_NAMES.length * 2);
  for (const [path, hash] of restoredFiles) expect([path, liveFiles.get(path)]).toEqual([path, hash]);
}, 240_000);
