import { setImmediate as nextTurn } from 'node:timers/promises';
import type { z } from 'zod';
import type { JobProgressRecord, JobRecord } from '../api/records.js';
import { rowsOf } from './columns.js';
import { fromJson, toJson } from './json.js';
import { claimedSubmissionRowStatement, type SubmissionRow } from './submissions.js';
import type { Database } from '../ports.js';

export type JobStatus = 'queued' | 'running' | 'done' | 'failed' | 'skipped';

/**
 * Local analysis of a submission's image, then its enrichment through the providers. `index`
 * writes the similarity index of submissions compared before it moved into the database (migration
 * 0014 queues it); no analysis starts while one is owed, since a comparison would miss what is not
 * indexed yet. `backup` writes one backup archive (lib/jobs/backup.ts), on the Node service only.
 */
export const JOB_TYPES = ['analyse', 'enrich', 'index', 'backup'] as const;
export type JobType = (typeof JOB_TYPES)[number];

export type Job = z.infer<typeof JobRecord>;

export type JobRow = Omit<Job, 'payload'> & { payload: string; run_token: string | null };

/**
 * A job as its worker claimed it. An analysis starts from its submission's row, so its claim reads
 * it in the same batch (decision 0056): `submission` is that row, null when the submission is gone;
 * absent for the other types.
 */
export type ClaimedJob = Job & { submission?: SubmissionRow | null };

export const toJob = ({ run_token: _token, ...row }: JobRow): Job => ({ ...row, payload: fromJson(row.payload, {}) });

/**
 * Queues a job unless the same job is already waiting for the same submission. Statements that
 * queue jobs return the ids queued: D1's `changes` counts more than the rows inserted, so the
 * number queued is the number of rows returned (`queuedCount`).
 */
export function enqueueJobStatement(db: Database, type: JobType, submissionIds: string | string[], payload: Record<string, unknown>, now: string) {
  // One statement for many submissions (distinct ids), as one bound JSON value: see upsertSubmissionStatement.
  return db
    .prepare(
      `INSERT INTO jobs (type, submission_id, status, payload, created_at)
       SELECT ?, s.value, 'queued', ?, ? FROM json_each(?) s WHERE NOT EXISTS
         (SELECT 1 FROM jobs WHERE type = ? AND submission_id = s.value AND status = 'queued')
       RETURNING id`,
    )
    .bind(type, toJson(payload), now, toJson(Array.isArray(submissionIds) ? submissionIds : [submissionIds]), type);
}

/** Queues a run of the `index` job (it has no submission). */
export function enqueueIndexJobStatement(db: Database, now: string) {
  return db.prepare("INSERT INTO jobs (type, status, payload, created_at) VALUES ('index', 'queued', '{}', ?)").bind(now);
}

/** A job's end as its worker records it. */
export interface JobEnd {
  id: number;
  token: string;
  status: 'done' | 'failed' | 'skipped';
  error: string | null;
  finishedAt: string;
}

/**
 * Takes the oldest queued job of the first of `types` that has one claimable (its submission has
 * no running job), in one statement, so two workers can never take the same job or work on one
 * submission at once. An analysis waits while an `index` job is owed. `ended`, the end of the job
 * the worker ran before, is recorded in the same batch, before the claim: on D1 one round trip for
 * both, where a worker running job after job made two and one more for each type it found empty.
 */
export async function claimNextJob(db: Database, types: readonly JobType[], token: string, now: string, ended?: JobEnd | null): Promise<ClaimedJob | null> {
  // Each type's candidate in order; the first row of the union ends it (SQLite runs UNION ALL's
  // arms in turn and stops at the LIMIT), so the types after a claimable one are not looked at.
  const candidates = types
    .map(
      () => `SELECT id FROM (SELECT j.id FROM jobs j WHERE j.type = ? AND j.status = 'queued'
               AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.submission_id = j.submission_id AND r.status = 'running')
               AND (j.type <> 'analyse' OR NOT EXISTS (SELECT 1 FROM jobs b WHERE b.type = 'index' AND b.status IN ('queued', 'running')))
               ORDER BY j.id LIMIT 1)`,
    )
    .join(' UNION ALL ');
  const claim = db
    .prepare(
      `UPDATE jobs SET status = 'running', attempts = attempts + 1, run_token = ?, started_at = ?, finished_at = NULL, error = NULL
       WHERE id = (${candidates} LIMIT 1) AND status = 'queued'
       RETURNING *`,
    )
    .bind(token, now, ...types);
  const first = ended ? [finishJobStatement(db, ended)] : [];
  const analysis = types.includes('analyse') ? [claimedSubmissionRowStatement(db, 'analyse', token)] : [];
  const results = await db.batch([...first, claim, ...analysis]);
  const [row] = rowsOf<JobRow>(results[first.length]);
  if (!row) return null;
  const job = toJob(row);
  return row.type === 'analyse' ? { ...job, submission: rowsOf<SubmissionRow>(results[first.length + 1])[0] ?? null } : job;
}

export function finishJobStatement(db: Database, end: JobEnd) {
  return db
    .prepare(`UPDATE jobs SET status = ?, error = ?, finished_at = ?, run_token = NULL WHERE id = ? AND run_token = ?`)
    .bind(end.status, end.error, end.finishedAt, end.id, end.token);
}

export async function finishJob(db: Database, end: JobEnd) {
  await finishJobStatement(db, end).run();
}

/** A claimed job goes back to the queue unfinished (its worker met a full disk), with the reason. */
export async function putJobBack(db: Database, id: number, token: string, reason: string) {
  await db
    .prepare(`UPDATE jobs SET status = 'queued', error = ?, started_at = NULL, run_token = NULL WHERE id = ? AND run_token = ?`)
    .bind(reason, id, token)
    .run();
}

/** Jobs left running by a process that died go back to the queue; returns how many. */
export async function requeueInterruptedJobs(db: Database): Promise<number> {
  const result = await db.prepare(`UPDATE jobs SET status = 'queued', run_token = NULL WHERE status = 'running'`).run();
  return result.meta.changes;
}

/**
 * Jobs running since before `startedBefore` go back to the queue: in the Worker a consumer that
 * ran out of time leaves its job running, and no process start exists to requeue it.
 */
export async function requeueStaleJobs(db: Database, startedBefore: string): Promise<number> {
  const result = await db.prepare(`UPDATE jobs SET status = 'queued', run_token = NULL WHERE status = 'running' AND started_at < ?`).bind(startedBefore).run();
  return result.meta.changes;
}

/** How many jobs a batch of queuing statements queued (their RETURNING rows). */
export function queuedCount(results: unknown[]): number {
  return results.reduce<number>((n, r) => n + ((r as { results?: unknown[] }).results?.length ?? 0), 0);
}

// Submissions looked at per statement of owed work: 5,000 took 3 ms when each already had its job
// and 15 ms when 4,000 of them were queued one (200,000 pending submissions in one statement took
// 0.1-0.4 s, and the cost grows with what is pending).
export const OWED_PAGE = 5000;

/**
 * The two kinds of owed work, each over the submissions its partial index holds (migration 0027):
 * an analysis that never finished, and the enrichment of an analysed submission that never got (or
 * finished) its enrichment. `busy`: the jobs whose waiting or running means nothing is owed.
 */
const OWED = [
  { type: 'analyse', index: 'submissions_owed_analysis', where: "analysis_status = 'pending'", busy: "'analyse'" },
  {
    type: 'enrich',
    index: 'submissions_owed_enrichment',
    where: "analysis_status IN ('done', 'failed') AND enrichment_status IN ('pending', 'running')",
    busy: "'analyse', 'enrich'",
  },
] as const;

type OwedKind = (typeof OWED)[number];

/**
 * One page of a kind of owed work: the next OWED_PAGE submissions after `after` in id order, each
 * queued its job unless one that means nothing is owed waits or runs; and where the page ends.
 */
function owedPageStatements(db: Database, kind: OwedKind, after: string, now: string) {
  const page = `SELECT id FROM submissions INDEXED BY ${kind.index} WHERE ${kind.where} AND id > ? ORDER BY id LIMIT ${OWED_PAGE}`;
  return [
    db
      .prepare(
        `INSERT INTO jobs (type, submission_id, status, payload, created_at)
         SELECT '${kind.type}', p.id, 'queued', '{}', ? FROM (${page}) p
         WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.submission_id = p.id AND j.type IN (${kind.busy}) AND j.status IN ('queued', 'running'))
         ORDER BY p.id
         RETURNING id`,
      )
      .bind(now, after),
    db.prepare(`SELECT COUNT(*) AS n, MAX(id) AS last FROM (${page})`).bind(after),
  ];
}

/**
 * Queues the work each submission is still owed, whatever moment a crash interrupted; a submission
 * with such a job already waiting or running gets no second one. A page at a time, with a turn of
 * the event loop between pages (each page of both kinds one batch, one round trip on D1), so the
 * cost of one statement does not grow with what is pending. Each page commits on its own: a crash
 * between pages leaves the rest owed, for the next call. `pages` bounds the batches (a Worker
 * invocation's queries). Returns how many jobs were queued.
 */
export async function queueOwedWork(db: Database, now: string, pages = Number.POSITIVE_INFINITY): Promise<number> {
  let queued = 0;
  let open = OWED.map((kind) => ({ kind, after: '' }));
  for (let page = 0; open.length > 0 && page < pages; page++) {
    if (page > 0) await nextTurn();
    const results = await db.batch(open.flatMap(({ kind, after }) => owedPageStatements(db, kind, after, now)));
    open = open.flatMap((lane, i) => {
      queued += queuedCount([results[2 * i]]);
      const [end] = rowsOf<{ n: number; last: string | null }>(results[2 * i + 1]);
      return end && Number(end.n) === OWED_PAGE && end.last !== null ? [{ kind: lane.kind, after: end.last }] : [];
    });
  }
  return queued;
}

export type JobProgress = z.infer<typeof JobProgressRecord>;
type JobTypeProgress = JobProgress['types'][number];
type JobFailure = JobProgress['failures'][number];

const RATE_WINDOW_MS = 60_000;
const FAILURES_SHOWN = 20;

/**
 * The work in flight. The counts of a type cover its current run: every job from the oldest one
 * still queued or running, or finished within the last minute, on; so a finished run stays in view
 * for a minute, then a type at rest shows zeros. Each count reads one index range, so the cost
 * follows the size of the run, not of the table. Two round trips, however many types: where each
 * run starts, then the counts and the failures (the console and scripts poll this while work runs,
 * and on D1 every round trip costs the Worker CPU the work wants).
 */
export async function jobProgress(db: Database, now: Date): Promise<JobProgress> {
  const since = new Date(now.getTime() - RATE_WINDOW_MS).toISOString();
  const starts = await db.batch(
    JOB_TYPES.flatMap((type) => [
      db.prepare(`SELECT MIN(id) AS id FROM jobs WHERE type = ? AND status IN ('queued', 'running')`).bind(type),
      db.prepare(`SELECT COUNT(*) AS n, MIN(id) AS id FROM jobs WHERE type = ? AND finished_at >= ?`).bind(type, since),
    ]),
  );
  const runs = JOB_TYPES.map((type, i) => {
    const [oldest] = rowsOf<{ id: number | null }>(starts[2 * i]);
    const [recent] = rowsOf<{ n: number; id: number | null }>(starts[2 * i + 1]);
    return { type, from: Math.min(oldest?.id ?? Number.MAX_SAFE_INTEGER, recent?.id ?? Number.MAX_SAFE_INTEGER), recent: Number(recent?.n ?? 0) };
  });
  const firstPending = Math.min(...runs.map((r) => r.from));
  const answers = await db.batch([
    ...runs.map(({ type, from }) =>
      db
        .prepare(
          `SELECT status, COUNT(*) AS n FROM jobs WHERE type = ? AND status IN ('queued', 'running', 'done', 'failed', 'skipped') AND id >= ? GROUP BY status`,
        )
        .bind(type, from),
    ),
    db
      .prepare(`SELECT id AS job_id, type, submission_id, error, finished_at FROM jobs WHERE status = 'failed' AND id >= ? ORDER BY id DESC LIMIT ?`)
      .bind(firstPending, FAILURES_SHOWN),
  ]);
  const types = runs.map(({ type, recent }, i): JobTypeProgress => {
    const by = Object.fromEntries(rowsOf<{ status: JobStatus; n: number }>(answers[i]).map((r) => [r.status, Number(r.n)])) as Partial<
      Record<JobStatus, number>
    >;
    const rate = recent / (RATE_WINDOW_MS / 1000);
    const left = (by.queued ?? 0) + (by.running ?? 0);
    return {
      type,
      queued: by.queued ?? 0,
      running: by.running ?? 0,
      done: by.done ?? 0,
      failed: by.failed ?? 0,
      skipped: by.skipped ?? 0,
      rate_per_s: Math.round(rate * 100) / 100,
      eta_s: left > 0 && rate > 0 ? Math.ceil(left / rate) : null,
    };
  });
  return { active: types.some((t) => t.queued + t.running > 0), types, failures: rowsOf<JobFailure>(answers[runs.length]) };
}

export async function listJobs(db: Database, status?: JobStatus, limit = 200): Promise<Job[]> {
  const rows = status
    ? await db.prepare('SELECT * FROM jobs WHERE status = ? ORDER BY id DESC LIMIT ?').bind(status, limit).all<JobRow>()
    : await db.prepare('SELECT * FROM jobs ORDER BY id DESC LIMIT ?').bind(limit).all<JobRow>();
  return rows.results.map(toJob);
}

/** Jobs waiting to run. */
export async function countQueuedJobs(db: Database): Promise<number> {
  const row = await db.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE status = 'queued'`).first<{ n: number }>();
  return row?.n ?? 0;
}

export async function getJob(db: Database, id: number): Promise<Job | null> {
  const row = await db.prepare('SELECT * FROM jobs WHERE id = ?').bind(id).first<JobRow>();
  return row ? toJob(row) : null;
}
