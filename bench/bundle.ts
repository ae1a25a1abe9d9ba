/**
 * Case bundle: one large case (a 3 MP submission photo, 20 downloaded matched images of about
 * 1 MB, 20 page captures of about 300 KB of HTML, 120 evidence items, 200 audit events), streamed
 * through `GET /api/submissions/{id}/bundle`'s code path and read to its end, in-process. Reports the
 * archive's size, the time to the last byte and the longest event-loop stall while it streamed.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import sharp from 'sharp';
import { SYSTEM_ACTOR } from '../lib/auth/actor.js';
import { caseBundle } from '../lib/bundle/case.js';
import { zipStream } from '../lib/bundle/zip.js';
import { buildConfig } from '../lib/config.js';
import { createEnv, type OwnedEnv } from '../lib/env.js';
import { createLogger } from '../lib/log.js';
import { auditStatement } from '../lib/repo/audit.js';
import { addPageCapture } from '../lib/repo/captures.js';
import { addEvidence, type NewEvidence } from '../lib/repo/evidence.js';
import { upsertSubmissionStatement } from '../lib/repo/submissions.js';
import type { BenchTable } from './run.js';

export const name = 'bundle';

const MATCHES = 20;
const PAGES = 20;
const ROUNDS = 5;

/** A photo-like JPEG: noise does not compress, as real photographs barely do. */
const photo = (width: number, height: number, seed: number) =>
  sharp(
    randomBytes(width * height * 3).map((b, i) => (b + seed + (i % width)) & 0xff),
    { raw: { width, height, channels: 3 } },
  )
    .jpeg({ quality: 85 })
    .toBuffer();

async function seedCase(env: OwnedEnv): Promise<void> {
  const now = new Date().toISOString();
  const image = await photo(2000, 1500, 1);
  await writeFile(path.join(env.paths.imagesDir, 'case.jpg'), image);
  await upsertSubmissionStatement(
    env.db,
    {
      id: 'case',
      title: 'a large case',
      file: 'images/case.jpg',
      origin: 'quick',
      submitted_at: '2026-11-20 09:30',
      submitted_at_epoch: 1795653000,
      width: 2000,
      height: 1500,
      format: 'jpeg',
      bytes: image.length,
      sha256: 'ab'.repeat(32),
    },
    now,
  ).run();
  await mkdir(path.join(env.paths.evidenceDir, 'case', 'pages'), { recursive: true });
  const evidence: NewEvidence[] = [];
  for (let i = 0; i < MATCHES; i++) {
    await writeFile(path.join(env.paths.evidenceDir, 'case', `m${i}.jpg`), await photo(1200, 900, i + 2));
    evidence.push({
      source: 'global_vision',
      kind: 'full_matching_image',
      group: 'web_match',
      title: `page ${i}`,
      url: `https://site${i}.example/post`,
      image_url: `https://site${i}.example/photo.jpg`,
      local_media_path: `evidence/case/m${i}.jpg`,
      similarity: 0.97,
      matched: true,
    });
  }
  for (let i = MATCHES; i < 120; i++)
    evidence.push({ source: 'regional', kind: 'blog_result', group: 'web_related', title: `result ${i}`, url: `https://blog${i}.example/` });
  const stored = await addEvidence(env.db, 'case', evidence, now);
  const html = (i: number) =>
    `<!doctype html><html><body>${Array.from({ length: 3000 }, (_, n) => `<p class="c${n % 7}">기사 본문 ${i}-${n} lorem ipsum dolor sit amet</p>`).join('\n')}</body></html>`;
  for (let i = 0; i < PAGES; i++) {
    const bytes = Buffer.from(html(i));
    const mediaPath = `evidence/case/pages/p${i}.html`;
    await writeFile(path.join(env.paths.dataDir, mediaPath), bytes);
    await addPageCapture(env.db, {
      evidence_id: stored[i].id,
      submission_id: 'case',
      page_url: `https://site${i}.example/post`,
      final_url: `https://site${i}.example/post`,
      http_status: 200,
      content_type: 'text/html',
      date_header: null,
      last_modified: null,
      bytes: bytes.length,
      sha256: 'cd'.repeat(32),
      media_path: mediaPath,
      image_sha256: null,
      fetched_at: now,
    });
  }
  await env.db.batch(
    Array.from({ length: 200 }, (_, i) =>
      auditStatement(
        env.db,
        { action: 'evidence.status', target_type: 'evidence', target_id: stored[i % stored.length].id, details: { submission_id: 'case', to: '판단에 사용' } },
        now,
        SYSTEM_ACTOR,
      ),
    ),
  );
}

export async function run(): Promise<BenchTable[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-bundle-'));
  const { config } = buildConfig({ SVC_DATA_DIR: dir });
  const env = await createEnv(config, { log: createLogger(config, { silent: true }) });
  try {
    await seedCase(env);
    const rows: (string | number)[][] = [];
    const times: number[] = [];
    let size = 0;
    let stall = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      const started = performance.now();
      const bundle = await caseBundle(env, 'case', SYSTEM_ACTOR);
      size = 0;
      for await (const chunk of zipStream(bundle.files)) size += chunk.length;
      times.push(performance.now() - started);
      delay.disable();
      stall = Math.max(stall, delay.max / 1e6);
    }
    times.sort((a, b) => a - b);
    rows.push([
      `${MATCHES} matched images, ${PAGES} page captures, 120 evidence, 200 audit events`,
      (size / 2 ** 20).toFixed(1),
      Math.round(times[Math.floor(ROUNDS / 2)]),
      Math.round(stall),
    ]);
    return [
      {
        title: 'Case bundle (GET /api/submissions/{id}/bundle)',
        columns: ['case', 'ZIP MiB', 'median ms to last byte', 'longest event-loop stall (ms)'],
        rows,
        notes: [`${ROUNDS} rounds, in-process, read as fast as the stream gives; images stored, HTML and JSON deflated on the thread pool.`],
      },
    ];
  } finally {
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
