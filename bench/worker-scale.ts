import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { startImageService } from '../image-service.js';
import { buildConfig } from '../lib/config.js';
import { startLocalWorker } from '../scripts/local-worker.js';
import { seededRandom } from '../test/helpers/random.js';
import { fakeProviderSettings, startFakeGlobalSearch, startFakeLocalLlm, startFakeRegional, startFakeVision } from '../test/fakes/index.js';
import type { BenchTable } from './run.js';
import type { Database } from '../lib/ports.js';

/**
 * The Worker at scale under miniflare: SUBMISSIONS generated JPEGs put in the local R2 bucket, one
 * reload, then every analysis and enrichment through the job queue (fake providers that answer at
 * once), the image service as its own HTTP server. Measures the wall time, how the finished jobs
 * spread over time, and the review queue's latency on D1 while the work runs and after.
 */
export const name = 'worker-scale';

const SUBMISSIONS = Number(process.env.BENCH_WORKER_SUBMISSIONS ?? 1000);
const CONSUMERS = Number(process.env.BENCH_WORKER_CONSUMERS ?? 3);
const ADMIN = 'bench-admin-token-90af31';

/**
 * A different picture per submission: a gradient and a dozen shapes placed, sized and coloured at
 * random from the index, as different as a day's photographs mostly are. (Pictures that differed
 * only by one circle and one box placed by the index were near one another by their hashes: the
 * pairs to check geometrically grew with the square of the count, at 1,000 most of the time.)
 */
async function photo(i: number): Promise<Uint8Array> {
  const random = seededRandom(i + 1);
  const colour = () =>
    `#${Math.floor(random() * 0xffffff)
      .toString(16)
      .padStart(6, '0')}`;
  const shapes = Array.from({ length: 12 }, () => {
    const [x, y, w, h] = [random() * 800, random() * 600, 30 + random() * 300, 30 + random() * 250];
    return random() < 0.5
      ? `<ellipse cx="${x.toFixed(0)}" cy="${y.toFixed(0)}" rx="${(w / 2).toFixed(0)}" ry="${(h / 2).toFixed(0)}" fill="${colour()}"/>`
      : `<rect x="${x.toFixed(0)}" y="${y.toFixed(0)}" width="${w.toFixed(0)}" height="${h.toFixed(0)}" fill="${colour()}" transform="rotate(${(random() * 90).toFixed(0)} ${x.toFixed(0)} ${y.toFixed(0)})"/>`;
  });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><defs><linearGradient id="g" x2="${random().toFixed(2)}" y2="${random().toFixed(2)}"><stop offset="0" stop-color="${colour()}"/><stop offset="1" stop-color="${colour()}"/></linearGradient></defs><rect width="800" height="600" fill="url(#g)"/>${shapes.join('')}</svg>`;
  return new Uint8Array(await sharp(Buffer.from(svg)).jpeg({ quality: 85 }).toBuffer());
}

/** Made once and kept under outputs/ (runtime data, not committed): 10,000 of them take minutes to draw. */
const PHOTOS = fileURLToPath(new URL('../outputs/bench/worker-scale-photos-v1/', import.meta.url));

async function keptPhoto(i: number): Promise<Uint8Array> {
  const file = path.join(PHOTOS, `w${String(i).padStart(5, '0')}.jpg`);
  const kept = await readFile(file).catch(() => null);
  if (kept) return new Uint8Array(kept);
  const bytes = await photo(i);
  await mkdir(PHOTOS, { recursive: true });
  await writeFile(file, bytes);
  return bytes;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/**
 * The bench's own reads and puts, asked again when workerd closes their connection before it
 * answers ("other side closed"): under load that happened in the middle of long runs with the jobs
 * still running inside; the jobs' own exactly-once count is what the run checks, not these calls.
 */
const dropped: string[] = [];
async function again<T>(action: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      if (cause?.code !== 'UND_ERR_SOCKET' || attempt === 5) throw error;
      dropped.push(`${new Date().toISOString().slice(11, 19)} ${(error as Error).message}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

export async function run(): Promise<BenchTable[]> {
  const [regional, vision, search, llm] = await Promise.all([startFakeRegional(), startFakeVision(), startFakeGlobalSearch(), startFakeLocalLlm()]);
  const images = await startImageService(buildConfig({}).config, 0);
  // Image-service calls per Worker instance: each analysis makes one /v1/analyse call.
  const analyses = Array.from({ length: CONSUMERS }, () => 0);
  const imageCalls = new Map<string, number>();
  const mf = await startLocalWorker({
    imageServiceUrl: images.url,
    consumers: CONSUMERS,
    onImageCall: (path, instance) => {
      imageCalls.set(path, (imageCalls.get(path) ?? 0) + 1);
      if (path === '/v1/analyse') analyses[instance]++;
    },
    bindings: { SVC_ADMIN_TOKEN: ADMIN, ...fakeProviderSettings({ regional, vision, search, llm }) },
  });
  try {
    const bucket = await mf.getR2Bucket('MEDIA');
    for (let i = 0; i < SUBMISSIONS; i++) {
      const bytes = await keptPhoto(i);
      await again(() => bucket.put(`submissions/images/w${String(i).padStart(5, '0')}.jpg`, bytes));
    }
    const call = (path: string, method = 'GET') => mf.dispatchFetch(`http://localhost${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } });
    const read = (route: string) => again(() => call(route).then((r) => r.text()));

    // The answer names the first 100 imports; the kept report pages them all.
    const wholeList = async (report: { imported: string[]; report_id?: string }) => {
      if (!report.report_id) return report.imported;
      const ids: string[] = [];
      for (let cursor = ''; ; ) {
        const page = (await (await call(`/api/reloads/${report.report_id}?list=imported&limit=5000${cursor ? `&cursor=${cursor}` : ''}`)).json()) as {
          items: { id: string }[];
          next_cursor: string | null;
        };
        ids.push(...page.items.map((item) => item.id));
        if (!page.next_cursor) return ids;
        cursor = page.next_cursor;
      }
    };
    const started = performance.now();
    // Reloads until no file is left (one invocation reads only as many as its subrequests allow).
    const imported: string[] = [];
    let reloads = 0;
    for (let remaining = 1; remaining > 0; reloads++) {
      const report = (await (await call('/api/submissions/reload', 'POST')).json()) as { imported: string[]; remaining: number; report_id?: string };
      imported.push(...(await wholeList(report)));
      remaining = report.remaining;
    }
    const reload = { imported };
    const reloadMs = performance.now() - started;
    // The reload's notices went to the first instance's queue; each other instance's sweep sends
    // notices for the waiting jobs to its own, so every consumer takes jobs from the one job table.
    for (let i = 1; i < CONSUMERS; i++) await (await mf.getWorker(`svc-${i}`)).scheduled({ cron: '*/5 * * * *' });
    const during: number[] = [];
    const timeline: { s: number; analysed: number; enriched: number }[] = [];
    // Finished jobs read from the job table itself: the progress API counts only the work in flight
    // (from the oldest unfinished job, or those finished in the last minute), so once every job is
    // done its counts fall back to 0 and never reach the total (the likely cause of an earlier run
    // that seemed to stall with its consumers idle).
    const db = (await mf.getD1Database('DB')) as unknown as Database;
    for (;;) {
      const t = performance.now();
      await read('/api/review-queue?limit=50');
      during.push(performance.now() - t);
      const counts = await again(() =>
        db
          .prepare(`SELECT type, status IN ('done', 'failed', 'skipped') AS finished, COUNT(*) AS n FROM jobs GROUP BY type, finished`)
          .all<{ type: string; finished: number; n: number }>(),
      );
      const finished = (type: string) => Number(counts.results.find((r) => r.type === type && r.finished)?.n ?? 0);
      const waiting = counts.results.filter((r) => !r.finished).length;
      const second = Math.round((performance.now() - started) / 1000);
      if (timeline.length === 0 || timeline[timeline.length - 1].s + 10 <= second)
        timeline.push({ s: second, analysed: finished('analyse'), enriched: finished('enrich') });
      // Every analysis finished and nothing left waiting: an analysis that failed queues no enrichment.
      if (finished('analyse') >= reload.imported.length && waiting === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const wallS = (performance.now() - started) / 1000;
    // Exactly once: every job ran one attempt and finished, and the image service saw one analysis per submission.
    const jobs = await db
      .prepare(`SELECT type, status, COUNT(*) AS n, SUM(attempts) AS attempts, MAX(attempts) AS most FROM jobs GROUP BY type, status ORDER BY type, status`)
      .all<{ type: string; status: string; n: number; attempts: number; most: number }>();
    const after: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await read('/api/review-queue?limit=50');
      after.push(performance.now() - t);
    }
    return [
      {
        title: `Worker under miniflare: ${reload.imported.length} submissions from R2 upload to enriched`,
        columns: ['measure', 'value'],
        rows: [
          ['reloads until nothing remained (index pass, R2 listing, probes)', `${reloads} in ${(reloadMs / 1000).toFixed(1)} s`],
          ['analyses per consumer (image-service calls of each instance)', `${analyses.join(' / ')} (total ${analyses.reduce((a, b) => a + b, 0)})`],
          ['image-service calls by route', [...imageCalls].map(([path, n]) => `${path} ${n}`).join(', ')],
          [
            'jobs by type and status: count, attempts, most attempts of one',
            jobs.results.map((j) => `${j.type} ${j.status} ${j.n}, ${j.attempts}, ${j.most}`).join('; '),
          ],
          ['wall time to every enrichment finished', `${wallS.toFixed(0)} s`],
          ['submissions per second end to end', (reload.imported.length / wallS).toFixed(1)],
          [
            'review queue on D1 while jobs run, p50 / p99',
            `${percentile(during, 50).toFixed(1)} / ${percentile(during, 99).toFixed(1)} ms (${during.length} requests)`,
          ],
          ['review queue on D1 at rest, p50 / p99', `${percentile(after, 50).toFixed(1)} / ${percentile(after, 99).toFixed(1)} ms (200 requests)`],
          ['finished jobs every 10 s (seconds: analysed / enriched)', timeline.map((p) => `${p.s}: ${p.analysed}/${p.enriched}`).join(', ')],
        ],
        notes: [
          `800x600 generated JPEGs; fake providers on 127.0.0.1 answer at once; ${CONSUMERS} instances of the Worker in one miniflare, each consuming its own queue with batches of 4 whose jobs run side by side, sharing D1 and R2 (miniflare runs one batch at a time per queue; on Cloudflare one queue has several consumer invocations at once); the image service on the same 2 cores.`,
          `Calls of the bench itself whose connection workerd closed before answering, asked again: ${dropped.length}${dropped.length ? ` (${dropped.slice(0, 5).join('; ')})` : ''}.`,
          `BENCH_WORKER_SUBMISSIONS sets the count (default 1,000), BENCH_WORKER_CONSUMERS the instances (default 3).`,
        ],
      },
    ];
  } finally {
    await mf.dispose();
    await images.stop();
    await Promise.all([regional, vision, search, llm].map((f) => f.close()));
  }
}
