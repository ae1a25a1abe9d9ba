/**
 * The review queue at 100,000 submissions (BENCH_QUEUE_SUBMISSIONS; five evidence rows each),
 * seeded through the repository by bench/queue-seed.ts, served by the service as its own process as
 * `npm start` runs it, and loaded from a second process by wrk with 8 connections: p50/p99 and
 * requests/s per URL, and the longest time the service's event loop was held during the whole load.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from './proc.js';
import type { BenchTable } from './run.js';
import { seedQueue } from './queue-seed.js';
import { scriptArgs } from '../test/helpers/npm-script.js';
import { listeningUrl, loopReport, serviceProcesses } from './service-process.js';

export const name = 'queue-load';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** `BENCH_QUEUE_SUBMISSIONS` (default 100,000): each count seeds a data folder of its own, kept for the next run. */
const SUBMISSIONS = Number(process.env.BENCH_QUEUE_SUBMISSIONS ?? 100_000);
/** The deep page: nine tenths of the way down the queue. */
const DEEP = Math.floor(SUBMISSIONS * 0.9);
const DATA_DIR = path.join(ROOT, 'outputs', 'bench', `queue-${SUBMISSIONS}`);
const CONNECTIONS = 8;
/**
 * `BENCH_QUEUE_WRK_THREADS` (default 1): wrk's threads. One drives the 8 connections at more than
 * 10,000 requests/s; a second is one more runnable thread on the two cores the service shares with
 * it, and took the first page's p99 from about 10 to 17-44 ms in the same run (decisions/0060).
 */
const WRK_THREADS = Number(process.env.BENCH_QUEUE_WRK_THREADS ?? 1);
const SECONDS = 8;
const TOKEN = 'bench-queue-token-7d41';
/** Pages asked in turn so that none is kept: far more than the service keeps (64). */
const IN_TURN = 2000;

/** wrk's latency lines ("50%  1.23ms") in milliseconds. */
function latency(output: string, percentile: string): number {
  const match = output.match(new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm'));
  if (!match) throw new Error(`wrk printed no ${percentile}% line:\n${output}`);
  return Number(match[1]) * { us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'];
}

/** One request on its own connection (the service's keep-alive is for wrk to load, not for this). */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false, headers: { authorization: `Bearer ${TOKEN}` } }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

interface Build {
  label: string;
  dir: string;
}

/** A checkout of the baseline commit beside this one, sharing node_modules (as bench/reload.ts makes it). */
function baselineBuild(commit: string): Build {
  const dir = path.join(ROOT, 'outputs', 'bench', `build-${commit}`);
  if (!existsSync(path.join(dir, 'server.ts'))) execFileSync('git', ['worktree', 'add', '--force', '--detach', dir, commit], { cwd: ROOT, stdio: 'ignore' });
  if (!existsSync(path.join(dir, 'node_modules'))) symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return { label: `baseline ${commit}`, dir };
}

interface Service {
  build: Build;
  child: ChildProcess;
  base: string;
  loopFile: string;
  errors: string;
}

/** One build's service on the seeded folder, as `npm start` runs it, with the loop monitor loaded. */
async function startService(build: Build, index: number): Promise<Service> {
  const loopFile = path.join(DATA_DIR, `loop-${index}.json`);
  // Port 0: the service takes a free port and logs its address (a port picked here may be taken).
  const child = spawn(process.execPath, ['--import', path.join(ROOT, 'bench', 'loop-monitor.mjs'), ...scriptArgs(build.dir, 'start')], {
    cwd: build.dir,
    env: {
      PATH: process.env.PATH,
      SVC_DATA_DIR: DATA_DIR,
      SVC_PORT: '0',
      SVC_ADMIN_TOKEN: TOKEN,
      BENCH_LOOP_FILE: loopFile,
      // Eight clients on one token are the load being measured, not a caller to slow down: with the
      // limits on, most answers were 429s.
      SVC_RATE_LIMIT_PER_SECOND: '0',
      ...(process.env.SVC_HTTP_PROCESSES ? { SVC_HTTP_PROCESSES: process.env.SVC_HTTP_PROCESSES } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const service: Service = { build, child, base: '', loopFile, errors: '' };
  child.stderr!.on('data', (d) => (service.errors += d));
  try {
    service.base = await listeningUrl(child);
    for (
      let i = 0;
      i < 1200 &&
      !(await get(`${service.base}/health`).then(
        (r) => r.status === 200,
        () => false,
      ));
      i++
    )
      await new Promise((r) => setTimeout(r, 50));
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${build.label}: ${error instanceof Error ? error.message : String(error)}\n${service.errors.slice(-2000)}`);
  }
  return service;
}

interface Load {
  p50: number;
  p99: number;
  rate: number;
  stall: number;
  cpuMs: number;
}

/**
 * A wrk script that asks the paths in turn, each of its threads from another part of the list,
 * so that no page is asked twice within a few hundred requests: pages the service computes, not
 * pages it kept (lib/review/kept-answers.ts).
 */
function inTurnScript(paths: readonly string[]): string {
  const file = path.join(DATA_DIR, 'in-turn.lua');
  writeFileSync(
    file,
    `local paths = { ${paths.map((p) => JSON.stringify(p)).join(', ')} }
local threads = 0
function setup(thread) thread:set("first", threads * math.floor(#paths / ${WRK_THREADS})); threads = threads + 1 end
function init(args) i = first end
function request() i = i + 1; return wrk.format("GET", paths[(i % #paths) + 1]) end
`,
  );
  return file;
}

/**
 * wrk against one URL (or a list of them, asked in turn) of one service: latency, rate, the
 * service's CPU per request and its longest stall meanwhile.
 */
async function load(service: Service, target: string | readonly string[]): Promise<Load> {
  const url = typeof target === 'string' ? target : target[0];
  const check = await get(service.base + url);
  if (check.status !== 200) throw new Error(`${url} answered ${check.status}: ${check.body.slice(0, 300)}`);
  const script = typeof target === 'string' ? [] : ['-s', inTurnScript(target)];
  const pids = serviceProcesses(service.child.pid!);
  for (const pid of pids) process.kill(pid, 'SIGUSR2');
  const cpuBefore = cpuSeconds(pids);
  const output = execFileSync(
    'wrk',
    [`-t${WRK_THREADS}`, `-c${CONNECTIONS}`, `-d${SECONDS}s`, '--latency', ...script, '-H', `authorization: Bearer ${TOKEN}`, service.base + url],
    {
      encoding: 'utf8',
    },
  );
  const cpu = cpuSeconds(pids) - cpuBefore;
  for (const pid of pids) rmSync(`${service.loopFile}.${pid}`, { force: true });
  for (const pid of pids) process.kill(pid, 'SIGWINCH');
  const requests = Number(output.match(/(\d+) requests in/)?.[1]);
  // A refused or failed answer is cheap and fast: one among the figures would flatter them.
  const refused = output.match(/Non-2xx or 3xx responses: (\d+)/)?.[1];
  if (refused) throw new Error(`${url}: ${refused} of ${requests} answers were not 2xx`);
  return {
    p50: latency(output, '50'),
    p99: latency(output, '99'),
    rate: Number(output.match(/Requests\/sec:\s+([\d.]+)/)?.[1]),
    stall: Math.max(...(await Promise.all(pids.map(async (pid) => (await loopReport(`${service.loopFile}.${pid}`)).max_ms)))),
    cpuMs: (cpu * 1000) / requests,
  };
}

/** The paths of the queue's first `count` pages, each reached by the cursor of the page before it. */
async function cursorPages(service: Service, count: number): Promise<string[]> {
  const paths = ['/api/review-queue'];
  while (paths.length < count) {
    const page = JSON.parse((await get(service.base + paths[paths.length - 1])).body) as { next_cursor: string | null };
    if (!page.next_cursor) break;
    paths.push(`/api/review-queue?cursor=${page.next_cursor}`);
  }
  return paths;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * `BENCH_QUEUE_BASELINE=<commit>` also serves the same folder from that commit's build, and the two
 * take turns under wrk request by request, round by round (the machine is shared: only figures from
 * one run compare); `SVC_HTTP_PROCESSES` is passed on to the service; `BENCH_QUEUE_ROUNDS` (default 1, or 3 with a baseline) and
 * `BENCH_QUEUE_REQUESTS` (a pattern on the request labels) keep a comparison short.
 */
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
  const baseline = process.env.BENCH_QUEUE_BASELINE;
  const builds: Build[] = [{ label: 'this build', dir: ROOT }, ...(baseline ? [baselineBuild(baseline)] : [])];
  const rounds = Number(process.env.BENCH_QUEUE_ROUNDS ?? (baseline ? 3 : 1));
  const only = new RegExp(process.env.BENCH_QUEUE_REQUESTS ?? '');
  const services: Service[] = [];
  try {
    for (const build of builds) services.push(await startService(build, services.length));
    const deep = JSON.parse((await get(`${services[0].base}/api/review-queue?offset=${DEEP}&limit=50`)).body) as { next_cursor: string };
    const urls = (
      [
        [`${IN_TURN.toLocaleString('en')} cursor pages in turn (none kept)`, await cursorPages(services[0], IN_TURN)],
        ['first page', '/api/review-queue'],
        ['undecided', '/api/review-queue?decision=undecided'],
        ['승인 + high', `/api/review-queue?decision=${encodeURIComponent('승인')}&level=high`],
        ['level=high', '/api/review-queue?level=high'],
        ['enrichment=failed', '/api/review-queue?enrichment=failed'],
        ['attention=true', '/api/review-queue?attention=true'],
        [`cursor after row ${(DEEP + 50).toLocaleString('en')}`, `/api/review-queue?cursor=${deep.next_cursor}`],
        [`offset=${DEEP}`, `/api/review-queue?offset=${DEEP}`],
        ['q=s012345 (an id)', '/api/review-queue?q=s012345'],
        ['q=festival (in 13 % of titles)', '/api/review-queue?q=festival'],
        [`q=${'야경'} (two characters, in 13 % of titles)`, `/api/review-queue?q=${encodeURIComponent('야경')}`],
        [`q=${'야경'} and level=high`, `/api/review-queue?q=${encodeURIComponent('야경')}&level=high`],
        ['q=z (one character, in no id or title)', '/api/review-queue?q=z'],
      ] as const
    ).filter(([label]) => only.test(label));
    // The services finish their start-up work (the similarity index) before the load begins.
    await new Promise((r) => setTimeout(r, 5000));
    const results = new Map<string, Load[]>();
    for (let round = 0; round < rounds; round++) {
      for (const [label, url] of urls) {
        // Each round the other build goes first, so neither always meets the warmer machine.
        for (const service of round % 2 ? [...services].reverse() : services) {
          const key = `${label}\u0000${service.build.label}`;
          results.set(key, [...(results.get(key) ?? []), await load(service, url)]);
        }
      }
    }
    const rows: (string | number)[][] = [];
    for (const [label] of urls) {
      for (const { build } of services) {
        const runs = results.get(`${label}\u0000${build.label}`)!;
        const figures = [
          median(runs.map((r) => r.p50)).toFixed(1),
          median(runs.map((r) => r.p99)).toFixed(1),
          median(runs.map((r) => r.rate)).toFixed(0),
          median(runs.map((r) => r.stall)).toFixed(1),
          median(runs.map((r) => r.cpuMs)).toFixed(2),
        ];
        rows.push(builds.length > 1 ? [label, build.label, ...figures] : [label, ...figures]);
      }
    }
    return [
      {
        title: `Review queue at ${SUBMISSIONS.toLocaleString('en')} submissions, ${CONNECTIONS} concurrent clients (wrk)`,
        columns: [
          ...(builds.length > 1 ? ['request', 'build'] : ['request']),
          'p50 (ms)',
          'p99 (ms)',
          'requests/s',
          'longest event-loop stall (ms)',
          'service CPU per request (ms)',
        ],
        rows,
        notes: [
          `${SUBMISSIONS.toLocaleString('en')} submissions and ${(SUBMISSIONS * 5).toLocaleString('en')} evidence rows seeded through the repository (bench/queue-seed.ts${seedS === null ? ', reused from an earlier run' : `, ${seedS.toFixed(0)} s`}); 50 rows per page`,
          `wrk -t${WRK_THREADS} -c${CONNECTIONS} -d${SECONDS}s from a second process on the same ${'2'}-core machine, the service as its own process`,
          'stall: the longest time an event loop of the service was held while wrk ran that request (monitorEventLoopDelay in each process, 1 ms resolution)',
          "CPU per request: the service's processes' user + system time while wrk ran (with its request processes), over the requests answered (10 ms clock ticks over some 8 s)",
          ...(rounds > 1 ? [`medians of ${rounds} rounds${builds.length > 1 ? ', the builds taking turns request by request' : ''}`] : []),
        ],
      },
    ];
  } finally {
    for (const service of services) {
      service.child.kill('SIGKILL');
      if (service.errors.trim()) console.error(`${service.build.label}: ${service.errors.slice(-2000)}`);
    }
  }
}
