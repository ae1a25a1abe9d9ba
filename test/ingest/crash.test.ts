import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_TOKEN } from '../helpers/admin-token.js';
import { useFakeProviders } from '../helpers/fake-world.js';
import { FIXTURE_NAMES, fixturePath } from '../helpers/fixtures.js';
import { scriptArgs } from '../helpers/npm-script.js';
import { until } from '../helpers/until.js';

/**
 * kill -9 at several moments of a reload and of the work it queues, then a restart and a reload:
 * every submission ends analysed and enriched, each by exactly one finished enrichment job, with
 * no evidence stored twice. The service runs as its own process, as `npm start` runs it.
 */
const ADMIN = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const ROOT = join(import.meta.dirname, '..', '..');
const fakes = useFakeProviders();
let images: { name: string; bytes: Buffer }[];

beforeAll(async () => {
  // Web detection takes a while, so a kill can land while enrichment runs.
  fakes.vision.respondWith({
    delayMs: 150,
    json: { responses: [{ webDetection: { webEntities: [{ entityId: '/m/1', description: 'Apollo lunar module', score: 0.9 }] } }] },
  });
  images = [];
  for (const name of FIXTURE_NAMES) images.push({ name, bytes: await sharp(fixturePath(name)).png().toBuffer() });
  // Distinct pictures made from the fixtures (a crop each), so the folder holds twelve.
  for (let i = 0; images.length < 12; i++) {
    const name = FIXTURE_NAMES[i % FIXTURE_NAMES.length];
    const bytes = await sharp(fixturePath(name))
      .extract({ left: 40 + 20 * i, top: 30, width: 200, height: 160 })
      .jpeg()
      .toBuffer();
    images.push({ name: `part-${i}.jpg`, bytes });
  }
});

interface Service {
  child: ChildProcess;
  url: string;
  exited: Promise<unknown>;
}

async function start(dataDir: string): Promise<Service> {
  const port = String(20000 + Math.floor(Math.random() * 30000));
  const child = spawn(process.execPath, scriptArgs(ROOT, 'start'), {
    cwd: ROOT,
    env: {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      SVC_PORT: port,
      SVC_ENRICH_CONCURRENCY: '2',
      SVC_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      ...fakes.settings,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  for (let i = 0; i < 300 && !output.includes('"listening"'); i++) await new Promise((r) => setTimeout(r, 50));
  if (!output.includes('"listening"')) throw new Error(`the service did not start: ${output.slice(-500)}`);
  return { child, url: `http://127.0.0.1:${port}`, exited };
}

async function progress(service: Service) {
  const body = (await (await fetch(`${service.url}/api/jobs/progress`, { headers: ADMIN })).json()) as {
    active: boolean;
    types: { type: string; queued: number; running: number; done: number }[];
  };
  return { active: body.active, analyse: body.types.find((t) => t.type === 'analyse')!, enrich: body.types.find((t) => t.type === 'enrich')! };
}

/** Until the service's job progress shows `what`: read every 25 ms for at most a minute. */
const progressed = (what: string, service: Service, condition: (p: Awaited<ReturnType<typeof progress>>) => boolean) =>
  until(what, () => progress(service), condition, { timeoutMs: 60_000, everyMs: 25 });

async function kill(service: Service): Promise<void> {
  service.child.kill('SIGKILL');
  await service.exited;
}

const KILL_POINTS: [string, (service: Service) => Promise<void>][] = [
  [
    'while the reload request runs',
    async (service) => {
      void fetch(`${service.url}/api/submissions/reload`, { method: 'POST', headers: ADMIN }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 60));
    },
  ],
  [
    'right after the reload answered',
    async (service) => {
      await fetch(`${service.url}/api/submissions/reload`, { method: 'POST', headers: ADMIN });
    },
  ],
  [
    'after the first analysis finished',
    async (service) => {
      await fetch(`${service.url}/api/submissions/reload`, { method: 'POST', headers: ADMIN });
      await progressed('an analysis done', service, (p) => p.analyse.done >= 1);
    },
  ],
  [
    'while enrichment runs',
    async (service) => {
      await fetch(`${service.url}/api/submissions/reload`, { method: 'POST', headers: ADMIN });
      await progressed('an enrichment running', service, (p) => p.enrich.running >= 1);
    },
  ],
];

describe('a crash at any moment of a reload', () => {
  it.each(KILL_POINTS)('killed %s, restarted and reloaded: every submission analysed and enriched once', async (_moment, beforeKill) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-crash-'));
    try {
      const imagesDir = join(dataDir, 'submissions', 'images');
      mkdirSync(imagesDir, { recursive: true });
      for (const image of images) writeFileSync(join(imagesDir, image.name), image.bytes);

      const first = await start(dataDir);
      await beforeKill(first);
      await kill(first);

      const second = await start(dataDir);
      const report = (await (await fetch(`${second.url}/api/submissions/reload`, { method: 'POST', headers: ADMIN })).json()) as { rejected: unknown[] };
      expect(report.rejected).toEqual([]);
      await progressed('every job ended', second, (p) => !p.active);
      const queue = (await (await fetch(`${second.url}/api/review-queue?limit=200`, { headers: ADMIN })).json()) as {
        items: { id: string; analysis_status: string; enrichment_status: string }[];
        total: number;
      };
      await kill(second);

      expect(queue.total).toBe(12);
      expect(queue.items.map((s) => [s.analysis_status, s.enrichment_status])).toEqual(Array(12).fill(['done', 'done']));
      const db = new Database(join(dataDir, 'svc.sqlite3'), { readonly: true });
      try {
        const enrichJobs = db
          .prepare(`SELECT submission_id, COUNT(*) AS n, MIN(status) AS status FROM jobs WHERE type = 'enrich' GROUP BY submission_id`)
          .all();
        expect(enrichJobs).toHaveLength(12);
        expect(enrichJobs.every((j) => (j as { n: number }).n === 1 && (j as { status: string }).status === 'done')).toBe(true);
        const pendingAnalyses = db.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE type = 'analyse' AND status != 'done'`).get();
        expect(pendingAnalyses).toEqual({ n: 0 });
        const twice = db
          .prepare(
            `SELECT submission_id, kind, group_key, IFNULL(title, ''), IFNULL(query, ''), COUNT(*) AS n FROM evidence GROUP BY 1, 2, 3, 4, 5 HAVING n > 1`,
          )
          .all();
        expect(twice).toEqual([]);
        const entities = db
          .prepare(`SELECT COUNT(DISTINCT submission_id) AS n FROM evidence WHERE source = 'global_vision' AND title = 'Apollo lunar module'`)
          .get();
        expect(entities).toEqual({ n: 12 });
      } finally {
        db.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
