/**
 * The Worker beside the single Node process on the same photographs: the ingest bench's `distinct`
 * corpus (its first 60 files, 1-2 MP), reload to every submission analysed, on a fresh data folder
 * (Node) or fresh D1 and R2 (Worker) each round. The Node service runs as `npm start` runs it; the
 * Worker bundle under miniflare (scripts/local-worker.ts, one consumer) with the image service as
 * its own process behind the IMAGES binding. Rounds alternate (Node, Worker, Node, Worker...) so
 * other load on the machine hits both alike; `BENCH_WORKER_BASELINE=<dir>` adds the Worker of
 * another checkout (its own bundle and image service) to each round.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { scriptArgs } from '../test/helpers/npm-script.js';
import { listeningUrl } from './service-process.js';
import { treeCpuSeconds } from './proc.js';
import type { BenchTable } from './run.js';

export const name = 'worker-ratio';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CORPUS = path.join(ROOT, 'outputs', 'bench', 'ingest-corpus', 'distinct-v1');
const IMAGES = Number(process.env.BENCH_WORKER_RATIO_IMAGES ?? 60);
const ROUNDS = Number(process.env.BENCH_WORKER_RATIO_ROUNDS ?? 3);
const BASELINE = process.env.BENCH_WORKER_BASELINE;
const TOKEN = 'bench-worker-ratio-token-5c1e07';
const AUTH = { authorization: `Bearer ${TOKEN}` };

interface Round {
  imagesPerS: number;
  /** CPU ms per image of every process of the deployment (service, or workerd + image service + miniflare's side in this process). */
  cpuMs: number;
}

/** Noise pictures that match nothing, reloaded first so worker threads are started and code optimised. */
const warmUpImages = () =>
  Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      sharp({ create: { width: 1200, height: 900, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 100 + 5 * i, sigma: 40 } } })
        .jpeg({ quality: 85 })
        .toBuffer(),
    ),
  );

/**
 * How often the bench asks the progress API while it waits. Each question is work for the
 * deployment measured: each cost workerd 19-33 ms of CPU at load 16-21 when it made 13 round trips
 * to D1, 8 ms with the 2 of decision 0049, and the bench's miniflare side about 6 ms more, where the
 * Node service answers from its own SQLite. Every 100 ms (20 before) the end of a round is seen at
 * most that late, under 1 % of a round.
 */
const POLL_MS = 100;

/** Until no analysis is queued or running, by the progress API. */
async function analysed(call: (path: string) => Promise<Response>): Promise<void> {
  for (;;) {
    const progress = (await (await call('/api/jobs/progress')).json()) as { types: { type: string; queued: number; running: number }[] };
    const analyse = progress.types.find((t) => t.type === 'analyse')!;
    if (analyse.queued + analyse.running === 0) return;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

async function reload(call: (path: string, method?: string) => Promise<Response>): Promise<number> {
  let imported = 0;
  for (let remaining = 1; remaining > 0; ) {
    const report = (await (await call('/api/submissions/reload', 'POST')).json()) as { counts: { imported: number }; remaining?: number };
    imported += report.counts.imported;
    remaining = report.remaining ?? 0;
  }
  return imported;
}

function spawnEntry(dir: string, script: 'start' | 'image-service', env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, scriptArgs(dir, script), { cwd: dir, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr!.resume();
  return child;
}

/** The Node service of this checkout on a fresh data folder. */
async function nodeRound(photos: { file: string; bytes: Buffer }[]): Promise<Round> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-ratio-'));
  const imagesDir = path.join(dataDir, 'submissions', 'images');
  await mkdir(imagesDir, { recursive: true });
  for (const [i, image] of (await warmUpImages()).entries()) await writeFile(path.join(imagesDir, `warm-up-${i}.jpg`), image);
  const child = spawnEntry(ROOT, 'start', { SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_ADMIN_TOKEN: TOKEN });
  try {
    const url = await listeningUrl(child);
    const call = (p: string, method = 'GET') => fetch(`${url}${p}`, { method, headers: AUTH });
    await reload(call);
    await analysed(call);
    for (const { file, bytes } of photos) await writeFile(path.join(imagesDir, file), bytes);
    return await measured(call, photos.length, [child.pid!]);
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The Worker bundle of a checkout under miniflare, its image service as its own process. */
async function workerRound(dir: string, photos: { file: string; bytes: Buffer }[]): Promise<Round> {
  const imageService = spawnEntry(dir, 'image-service', {
    SVC_IMAGE_SERVICE_PORT: String(20000 + Math.floor(Math.random() * 30000)),
    SVC_HOST: '127.0.0.1',
  });
  const { startLocalWorker } = (await import(path.join(dir, 'scripts', 'local-worker.ts'))) as typeof import('../scripts/local-worker.js');
  try {
    const imagesUrl = await new Promise<string>((resolve, reject) => {
      let seen = '';
      imageService.stdout!.setEncoding('utf8');
      imageService.stdout!.on('data', (chunk: string) => {
        seen += chunk;
        const url = /"url":"([^"]+)"/.exec(seen)?.[1];
        if (url) resolve(url);
      });
      imageService.once('exit', (code) => reject(new Error(`the image service exited (${code})`)));
    });
    // workerd takes the bundle's modules from below the working folder: the checkout's own.
    const cwd = process.cwd();
    process.chdir(dir);
    const mf = await startLocalWorker({ imageServiceUrl: imagesUrl, bindings: { SVC_ADMIN_TOKEN: TOKEN } }).finally(() => process.chdir(cwd));
    try {
      const bucket = await mf.getR2Bucket('MEDIA');
      const call = (p: string, method = 'GET') => mf.dispatchFetch(`http://localhost${p}`, { method, headers: AUTH }) as unknown as Promise<Response>;
      for (const [i, image] of (await warmUpImages()).entries()) await bucket.put(`submissions/images/warm-up-${i}.jpg`, new Uint8Array(image));
      await reload(call);
      await analysed(call);
      for (const { file, bytes } of photos) await bucket.put(`submissions/images/${file}`, new Uint8Array(bytes));
      // workerd and the image service are children of this process; miniflare's own side runs here (and the IMAGES binding, in builds before decision 0045).
      return await measured(call, photos.length, [process.pid]);
    } finally {
      await mf.dispose();
    }
  } finally {
    imageService.kill('SIGKILL');
  }
}

async function measured(call: (path: string, method?: string) => Promise<Response>, count: number, pids: number[]): Promise<Round> {
  const cpu = () => pids.reduce((sum, pid) => sum + treeCpuSeconds(pid), 0);
  const cpuBefore = cpu();
  const started = performance.now();
  const imported = await reload(call);
  if (imported !== count) throw new Error(`imported ${imported} of ${count}`);
  await analysed(call);
  const seconds = (performance.now() - started) / 1000;
  return { imagesPerS: count / seconds, cpuMs: ((cpu() - cpuBefore) * 1000) / count };
}

/**
 * A round again on fresh storage when workerd closed miniflare's connection under one of the
 * bench's own calls ("fetch failed": other side closed, EPIPE), which a loaded machine does now and
 * then (benchmarks.md#worker-scale); at most twice, each counted in the notes.
 */
const retried: string[] = [];
async function roundAgain(label: string, round: () => Promise<Round>): Promise<Round> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await round();
    } catch (error) {
      if (!(error instanceof TypeError && error.message === 'fetch failed') || attempt === 3) throw error;
      retried.push(`${label}: ${String((error.cause as Error | undefined)?.message ?? error.message)}`);
    }
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function run(): Promise<BenchTable[]> {
  if (!existsSync(CORPUS)) throw new Error(`no ${CORPUS}: \`npm run bench -- ingest\` builds the distinct corpus first`);
  const files = (await readdir(CORPUS))
    .filter((f) => f.endsWith('.jpg'))
    .sort()
    .slice(0, IMAGES);
  const photos = await Promise.all(files.map(async (file) => ({ file, bytes: await readFile(path.join(CORPUS, file)) })));
  const builds: { label: string; round: () => Promise<Round>; rounds: Round[] }[] = [
    { label: 'Node service (npm start)', round: () => nodeRound(photos), rounds: [] },
    { label: 'Worker under miniflare, this build', round: () => workerRound(ROOT, photos), rounds: [] },
    ...(BASELINE ? [{ label: `Worker under miniflare, ${path.basename(BASELINE)}`, round: () => workerRound(BASELINE, photos), rounds: [] }] : []),
  ];
  const loads: string[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    for (const build of builds) build.rounds.push(await roundAgain(build.label, build.round));
    loads.push(os.loadavg()[0].toFixed(1));
  }
  const node = median(builds[0].rounds.map((r) => r.imagesPerS));
  return [
    {
      title: `Worker beside Node: ${photos.length} distinct 1-2 MP JPEGs, reload to every submission analysed`,
      columns: ['deployment', 'images/s', 'x Node', 'CPU ms per image (all its processes)', 'images/s per round'],
      rows: builds.map(({ label, rounds }) => {
        const rate = median(rounds.map((r) => r.imagesPerS));
        return [
          label,
          rate.toFixed(1),
          (rate / node).toFixed(2),
          median(rounds.map((r) => r.cpuMs)).toFixed(0),
          rounds.map((r) => r.imagesPerS.toFixed(1)).join(', '),
        ];
      }),
      notes: [
        `median of ${ROUNDS} alternating rounds, each after a warm-up reload of 8 noise pictures on the same fresh storage; ${os.availableParallelism()} cores; 1-minute load average after each round ${loads.join(', ')}`,
        `rounds run again after workerd closed miniflare's connection: ${retried.length}${retried.length ? ` (${retried.join('; ')})` : ''}`,
        'Worker: one consumer (one queue, batches as local-worker.ts sets them); the image service as its own process behind the IMAGES binding (straight from workerd since decision 0045, through this process before); CPU of workerd, the image service and this process',
      ],
    },
  ];
}
