/**
 * The review queue at 100,000 submissions (500,000 evidence rows), seeded through the repository
 * by bench/queue-seed.ts, served by the service as its own process as `npm start` runs it, and
 * loaded from a second process by wrk with 8 connections: p50/p99 and requests/s per URL, and the
 * longest time the service's event loop was held during the whole load.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchTable } from './run.js';
import { seedQueue } from './queue-seed.js';

export const name = 'queue-load';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SUBMISSIONS = 100_000;
const DATA_DIR = path.join(ROOT, 'outputs', 'bench', `queue-${SUBMISSIONS}`);
const CONNECTIONS = 8;
const SECONDS = 8;
const TOKEN = 'bench-queue-token-7d41';

/** wrk's latency lines ("50%  1.23ms") in milliseconds. */
function latency(output: string, percentile: string): number {
  const match = output.match(new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm'));
  if (!match) throw new Error(`wrk printed no ${percentile}% line:\n${output}`);
  return Number(match[1]) * { us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'];
}

/** One request on its own connection (the service's keep-alive is for wrk to load, not for this). */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false, headers: { authorization: `Bearer ${TOKEN}` } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

/** The address the service logs once it listens (its info lines are JSON on stdout). */
function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen: string | null = '';
    child.stdout!.setEncoding('utf8');
    // Read to the end either way: a full pipe would stop the service.
    child.stdout!.on('data', (chunk: string) => {
      if (seen === null) return;
      seen += chunk;
      const url = /"message":"listening","url":"([^"]+)"/.exec(seen)?.[1];
      if (url) {
        seen = null;
        resolve(url);
      }
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before it listened`)));
  });
}

/** The monitor's answer to SIGWINCH, read once the file it writes is whole (a loaded machine may take a while). */
async function longestStall(file: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    await new Promise((r) => setTimeout(r, 100));
    try {
      return (JSON.parse(readFileSync(file, 'utf8')) as { max_ms: number }).max_ms;
    } catch (error) {
      if (attempt >= 100) throw new Error(`the loop monitor wrote no whole ${file} within 10 s: ${String(error)}`);
    }
  }
}

export async function run(): Promise<BenchTable[]> {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
  } catch (error) {
    // wrk prints its version and exits 1; only a missing binary is a problem.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('wrk is not installed: apt-get install wrk');
  }
  const marker = path.join(DATA_DIR, 'seeded.json');
  let seedS: number | null = null;
  if (!existsSync(marker)) {
    rmSync(DATA_DIR, { recursive: true, force: true });
    const started = performance.now();
    await seedQueue(DATA_DIR, SUBMISSIONS);
    seedS = (performance.now() - started) / 1000;
    writeFileSync(marker, JSON.stringify({ submissions: SUBMISSIONS }));
  }
  const loopFile = path.join(DATA_DIR, 'loop.json');
  // Port 0: the service takes a free port and logs its address (a port picked here may be taken).
  const child = spawn(process.execPath, ['--import', './bench/loop-monitor.mjs', '--import', 'tsx', 'server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, SVC_DATA_DIR: DATA_DIR, SVC_PORT: '0', SVC_ADMIN_TOKEN: TOKEN, BENCH_LOOP_FILE: loopFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (d) => (errors += d));
  try {
    const base = await listeningUrl(child);
    for (let i = 0; i < 1200 && !(await get(`${base}/health`).then((r) => r.status === 200, () => false)); i++) await new Promise((r) => setTimeout(r, 50));
    const deep = JSON.parse((await get(`${base}/api/review-queue?offset=90000&limit=50`)).body) as { next_cursor: string };
    const urls: [string, string][] = [
      ['first page', '/api/review-queue'],
      ['undecided', '/api/review-queue?decision=undecided'],
      ['승인 + high', `/api/review-queue?decision=${encodeURIComponent('승인')}&level=high`],
      ['level=high', '/api/review-queue?level=high'],
      ['enrichment=failed', '/api/review-queue?enrichment=failed'],
      ['attention=true', '/api/review-queue?attention=true'],
      ['cursor after row 90,050', `/api/review-queue?cursor=${deep.next_cursor}`],
      ['offset=90000', '/api/review-queue?offset=90000'],
      ['q=s012345 (an id)', '/api/review-queue?q=s012345'],
      ['q=festival (in 13 % of titles)', '/api/review-queue?q=festival'],
      [`q=${'야경'} (two characters, no index)`, `/api/review-queue?q=${encodeURIComponent('야경')}`],
    ];
    // The service finishes its start-up work (the similarity index) before the load begins.
    await new Promise((r) => setTimeout(r, 5000));
    const rows: (string | number)[][] = [];
    for (const [label, url] of urls) {
      const check = await get(base + url);
      if (check.status !== 200) throw new Error(`${url} answered ${check.status}: ${check.body.slice(0, 300)}`);
      process.kill(child.pid!, 'SIGUSR2');
      const output = execFileSync('wrk', ['-t2', `-c${CONNECTIONS}`, `-d${SECONDS}s`, '--latency', '-H', `authorization: Bearer ${TOKEN}`, base + url], { encoding: 'utf8' });
      const rate = Number(output.match(/Requests\/sec:\s+([\d.]+)/)?.[1]);
      rmSync(loopFile, { force: true });
      process.kill(child.pid!, 'SIGWINCH');
      const stall = await longestStall(loopFile);
      rows.push([label, latency(output, '50').toFixed(1), latency(output, '99').toFixed(1), rate.toFixed(0), stall.toFixed(1)]);
    }
    return [
      {
        title: `Review queue at ${SUBMISSIONS.toLocaleString('en')} submissions, ${CONNECTIONS} concurrent clients (wrk)`,
        columns: ['request', 'p50 (ms)', 'p99 (ms)', 'requests/s', 'longest event-loop stall (ms)'],
        rows,
        notes: [
          `${SUBMISSIONS.toLocaleString('en')} submissions and ${(SUBMISSIONS * 5).toLocaleString('en')} evidence rows seeded through the repository (bench/queue-seed.ts${seedS === null ? ', reused from an earlier run' : `, ${seedS.toFixed(0)} s`}); 50 rows per page`,
          `wrk -t2 -c${CONNECTIONS} -d${SECONDS}s from a second process on the same ${'2'}-core machine, the service as its own process`,
          'stall: the longest time the service\'s event loop was held while wrk ran that request (monitorEventLoopDelay, 1 ms resolution)',
        ],
      },
    ];
  } finally {
    child.kill('SIGKILL');
    if (errors.trim()) console.error(errors.slice(-2000));
  }
}
