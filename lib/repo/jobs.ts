import type { Database } from '../db/types.js';
import { fromJson, toJson } from './json.js';

export type JobStatus = 'queued' | 'running' | 'done' | 'failed' | 'skipped';

export interface Job {
  id: number;
  type: string;
  submission_id: string | null;
  status: JobStatus;
  attempts: number;
  payload: Record<string, unknown>;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

type JobRow = Omit<Job, 'payload'> & { payload: string; run_token: string | null };

const toJob = ({ run_token: _token, ...row }: JobRow): Job => ({ ...row, payload: fromJson(row.payload, {}) });

/** Queues a job unless the same job is already waiting for the same submission. */
export function enqueueJobStatement(db: Database, type: string, submissionId: string, payload: Record<string, unknown>, now: string) {
  return db
    .prepare(
      `INSERT INTO jobs (type, submission_id, status, payload, created_at)
       SELECT ?, ?, 'queued', ?, ? WHERE NOT EXISTS
         (SELECT 1 FROM jobs WHERE type = ? AND submission_id = ? AND status = 'queued')`,
    )
    .bind(type, submissionId, toJson(payload), now, type, submissionId);
}

/**
 * Takes the oldest queued job whose submission has no running job, in one statement, so two
 * workers can never take the same job or work on one submission at once.
 */
export async function claimNextJob(db: Database, token: string, now: string): Promise<Job | null> {
  const row = await db
    .prepare(
      `UPDATE jobs SET status = 'running', attempts = attempts + 1, run_token = ?, started_at = ?, finished_at = NULL, error = NULL
       WHERE id = (SELECT j.id FROM jobs j WHERE j.status = 'queued'
                   AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.status = 'running' AND r.submission_id = j.submission_id)
                   ORDER BY j.id LIMIT 1)
         AND status = 'queued'
       RETURNING *`,
    )
    .bind(token, now)
    .first<JobRow>();
  return row ? toJob(row) : null;
}

export async function finishJob(db: Database, id: number, token: string, status: 'done' | 'failed' | 'skipped', error: string | null, now: string) {
  await db
    .prepare(`UPDATE jobs SET status = ?, error = ?, finished_at = ?, run_token = NULL WHERE id = ? AND run_token = ?`)
    .bind(status, error, now, id, token)
    .run();
}

/** Jobs left running by a process that died go back to the queue; returns how many. */
export async function requeueInterruptedJobs(db: Database): Promise<number> {
  const result = await db.prepare(`UPDATE jobs SET status = 'queued', run_token = NULL WHERE status = 'running'`).run();
  return result.meta.changes;
}

export async function listJobs(db: Database, status?: JobStatus, limit = 200): Promise<Job[]> {
  const rows = status
    ? await db.prepare('SELECT * FROM jobs WHERE status = ? ORDER BY id DESC LIMIT ?').bind(status, limit).all<JobRow>()
    : await db.prepare('SELECT * FROM jobs ORDER BY id DESC LIMIT ?').bind(limit).all<JobRow>();
  return rows.results.map(toJob);
}

export async function getJob(db: Database, id: number): Promise<Job | null> {
  const row = await db.prepare('SELECT * FROM jobs WHERE id = ?').bind(id).first<JobRow>();
  return row ? toJob(row) : null;
}
