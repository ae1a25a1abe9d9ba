/**
 * A long day: BENCH_LONG_DAY_SUBMISSIONS (default 50,000) small distinct pictures arrive in reloads
 * of BENCH_LONG_DAY_BATCH (default 5,000), each analysed and enriched against the fake providers (test/helpers/fake-world.ts),
 * while 4 clients read the review queue and review pages. The service runs as its own process, as
 * `npm start` runs it, with the loop monitor. It reports what a service that leaks or locks up
 * under days of load would show: resident memory and open files after the first 5,000 and at the
 * end, the event loop's delay, the clients' latency, and whether every job ran exactly once.
 */
import { spawn } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import sharp from 'sharp';
import { startFakeProviders } from '../test/helpers/fake-world.js';
import { seededRandom } from '../test/helpers/random.js';
import { descendants } from './proc.js';
import type { BenchTable } from './run.js';
import { scriptArgs } from '../test/helpers/npm-script.js';
import { listeningUrl, loopReport, serviceProcesses } from './service-process.js';

export const name = 'long-day';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SUBMISSIONS = Number(process.env.BENCH_LONG_DAY_SUBMISSIONS ?? 50_000);
const BATCH = Number(process.env.BENCH_LONG_DAY_BATCH ?? 5_000);
const CLIENTS = 4;
/** A client's pause between requests: a reviewer who clicks ten times a second, far faster than people do. */
const THINK_MS = 100;
const TOKEN = 'bench-long-day-token-61c2';
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** Small pictures of random blocks, different enough that none matches another; made once and kept. */
async function pictures(count: number): Promise<string[]> {
  const dir = path.join(ROOT, 'outputs', 'bench', 'long-day', `pictures-v1`);
  mkdirSync(dir, { recursive: true });
  const name = (i: number) => `day-${String(i).padStart(6, '0')}.jpg`;
  const random = seededRandom(11);
  for (let i = 0; i < count; i++) {
    const blocks = Array.from({ length: 12 }, () => [random(), random(), random(), random(), random() * 255, random() * 255, random() * 255]);
    if (existsSync(path.join(dir, name(i)))) continue;
    const width = 160;
    const height = 120;
    const data = Buffer.alloc(width * height * 3, 128);
    for (const [x, y, w, h, r, g, b] of blocks) {
      const [x0, y0] = [Math.floor(x * width), Math.floor(y * height)];
      const [x1, y1] = [Math.min(width, x0 + Math.ceil(w * width * 0.6)), Math.min(height, y0 + Math.ceil(h * height * 0.6))];
      for (let py = y0; py < y1; py++) for (let px = x0; px < x1; px++) data.set([r, g, b], (py * width + px) * 3);
    }
    await writeFile(
      path.join(dir, name(i)),
      await sharp(data, { raw: { width, height, channels: 3 } })
        .jpeg({ quality: 85 })
        .toBuffer(),
    );
  }
  return Array.from({ length: count }, (_, i) => path.join(dir, name(i)));
}

/** Resident memory (MiB) and open file descriptors of the service and every process it started, from /proc. */
function footprint(root: number): { rssMiB: number; fds: number } {
  let rssKiB = 0;
  let fds = 0;
  for (const pid of descendants(root)) {
    try {
      rssKiB += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      fds += readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      // gone meanwhile
    }
  }
  return { rssMiB: rssKiB / 1024, fds };
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))] ?? 0;

/** A reviewer's reading: the queue's first page, then the review of one of its submissions, again and again. */
function startClients(base: string) {
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const timed = async (url: string) => {
    const started = performance.now();
    const response = await fetch(base + url, { headers: AUTH });
    const text = await response.text();
    latencies.push(performance.now() - started);
    if (!response.ok) failures++;
    return text;
  };
  const clients = Array.from({ length: CLIENTS }, async (_, c) => {
    for (let n = 0; running; n++) {
      const queue = JSON.parse(await timed('/api/review-queue?limit=50')) as { items?: { id: string }[] };
      const items = queue.items ?? [];
      if (items.length) await timed(`/api/submissions/${encodeURIComponent(items[(n * CLIENTS + c) % items.length].id)}/review`);
      await new Promise((r) => setTimeout(r, THINK_MS));
    }
  });
  return {
    latencies,
    failures: () => failures,
    async stop() {
      running = false;
      await Promise.all(clients);
    },
  };
}

async function until(done: () => Promise<boolean>, what: string, timeoutMs = 4 * 60 * 60 * 1000) {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) if (await done()) return;
  throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
}

export async function run(): Promise<BenchTable[]> {
  const files = await pictures(SUBMISSIONS);
  const fakes = await startFakeProviders();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-long-day-'));
  const imagesDir = path.join(dataDir, 'submissions', 'images');
  mkdirSync(imagesDir, { recursive: true });
  const loopFile = path.join(dataDir, 'loop');
  const child = spawn(process.execPath, ['--import', path.join(ROOT, 'bench', 'loop-monitor.mjs'), ...scriptArgs(ROOT, 'start')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      ...fakes.settings,
      SVC_DATA_DIR: dataDir,
      SVC_PORT: '0',
      SVC_ADMIN_TOKEN: TOKEN,
      BENCH_LOOP_FILE: loopFile,
      // The day's load is the point here, not the callers' limits, nor the providers' daily quotas.
      SVC_RATE_LIMIT_PER_SECOND: '0',
      SVC_GLOBAL_DAILY_LIMIT: String(SUBMISSIONS * 4),
      SVC_REGIONAL_DAILY_LIMIT: String(SUBMISSIONS * 4),
      SVC_GLOBAL_CUSTOM_SEARCH_DAILY_LIMIT: String(SUBMISSIONS * 4),
      SVC_LLM_DAILY_LIMIT: String(SUBMISSIONS * 4),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr!.on('data', (d) => (errors = (errors + d).slice(-4000)));
  const started = performance.now();
  try {
    const base = await listeningUrl(child);
    await until(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 'health');
    const pids = serviceProcesses(child.pid!);
    const idle = async () => {
      const progress = (await (await fetch(`${base}/api/jobs/progress`, { headers: AUTH })).json()) as { types: { queued: number; running: number }[] };
      return progress.types.every((t) => t.queued + t.running === 0);
    };
    const clients = startClients(base);
    const samples: { after: number; rssMiB: number; fds: number; seconds: number }[] = [];
    for (let at = 0; at < files.length; at += BATCH) {
      for (const file of files.slice(at, at + BATCH)) linkSync(file, path.join(imagesDir, path.basename(file)));
      const reload = await fetch(`${base}/api/submissions/reload`, { method: 'POST', headers: AUTH });
      if (!reload.ok) throw new Error(`reload answered ${reload.status}: ${(await reload.text()).slice(0, 300)}`);
      await reload.arrayBuffer();
      await until(idle, `the jobs of the reload at ${at}`);
      samples.push({ after: Math.min(files.length, at + BATCH), ...footprint(child.pid!), seconds: (performance.now() - started) / 1000 });
      console.error(`long-day: ${samples.at(-1)!.after} done in ${samples.at(-1)!.seconds.toFixed(0)} s, RSS ${samples.at(-1)!.rssMiB.toFixed(0)} MiB`);
      // The loop is measured from the end of the first batch: start-up and warming are not the day.
      if (at === 0) for (const pid of pids) process.kill(pid, 'SIGUSR2');
    }
    await clients.stop();
    for (const pid of pids) process.kill(pid, 'SIGWINCH');
    const loops = await Promise.all(pids.map((pid) => loopReport(`${loopFile}.${pid}`)));
    const db = new Database(path.join(dataDir, 'svc.sqlite3'), { readonly: true });
    const jobs = db.prepare('SELECT type, status, COUNT(*) AS n, SUM(attempts) AS attempts FROM jobs GROUP BY type, status ORDER BY type, status').all() as {
      type: string;
      status: string;
      n: number;
      attempts: number;
    }[];
    const twice = (
      db
        .prepare('SELECT COUNT(*) AS n FROM (SELECT submission_id FROM jobs WHERE submission_id IS NOT NULL GROUP BY submission_id, type HAVING COUNT(*) > 1)')
        .get() as { n: number }
    ).n;
    const { analysed, enriched } = db
      .prepare(`SELECT SUM(analysis_status = 'done') AS analysed, SUM(enrichment_status IN ('done', 'skipped')) AS enriched FROM submissions`)
      .get() as { analysed: number; enriched: number };
    db.close();
    const first = samples[0];
    const last = samples.at(-1)!;
    const load = os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ');
    return [
      {
        title: `A long day: ${files.length.toLocaleString('en')} submissions in reloads of ${BATCH.toLocaleString('en')}, analysed and enriched, ${CLIENTS} clients reading`,
        columns: ['after', 'elapsed (s)', 'RSS of the service and the processes it started (MiB)', 'their open files'],
        rows: samples.map((s) => [s.after.toLocaleString('en'), s.seconds.toFixed(0), s.rssMiB.toFixed(0), s.fds]),
        notes: [
          `RSS at the end is ${((100 * last.rssMiB) / first.rssMiB - 100).toFixed(1)} % over RSS after the first ${first.after.toLocaleString('en')} (target: within 15 %); open files ${first.fds} then ${last.fds}`,
          `event loop from the first batch's end, p99 / longest: ${loops.map((l, i) => `${i === 0 ? 'jobs process' : `request process ${i}`} ${l.p99_ms.toFixed(1)} / ${l.max_ms.toFixed(0)} ms`).join(', ')} (target p99 under 50 ms)`,
          `clients: ${clients.latencies.length.toLocaleString('en')} requests, p50 ${percentile(clients.latencies, 50).toFixed(1)} ms, p99 ${percentile(clients.latencies, 99).toFixed(1)} ms, ${clients.failures()} not 2xx (${THINK_MS} ms between a client's requests)`,
          `jobs: ${jobs.map((j) => `${j.type} ${j.status} ${j.n} (${j.attempts} attempts)`).join('; ')}; submissions with a job type twice: ${twice}; analysed ${analysed}, enriched ${enriched} of ${files.length}`,
          `pictures 160x120 JPEG of random blocks; fake providers answer every call (web detection finds nothing); ${os.availableParallelism()} cores, load average at the end ${load}`,
        ],
      },
    ];
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${errors}`);
  } finally {
    child.kill('SIGKILL');
    await fakes.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
