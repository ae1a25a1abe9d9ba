import { z } from 'zod';
import { answer } from '../lib/api/answer.js';
import { JobRecord } from '../lib/api/records.js';
import { conflict } from '../lib/http/errors.js';
import { auditStatement } from '../lib/repo/audit.js';
import { backupInFlight, enqueueBackupStatement, listBackupJobs } from '../lib/repo/backups.js';
import { getJob, queuedCount } from '../lib/repo/jobs.js';
import type { Env } from '../lib/ports.js';
import { route } from './route.js';

const FOLLOW = '/api/admin/backups';

const BackupStarted = answer(
  'backupStarted',
  z.object({
    job: JobRecord,
    /** False when a backup was already queued or running: this is that one. */
    queued: z.boolean(),
    follow: z.literal(FOLLOW),
  }),
);

/**
 * POST /api/admin/backup: queues a backup job (lib/jobs/backup.ts) and answers 202 at once; the
 * archive goes to the configured backup folder, never to a path from the request. One backup at a
 * time: while one is queued or running, the answer is that one.
 */
export async function handleBackupStart(_request: Request, env: Env): Promise<Response> {
  if (!env.backups) throw conflict('this deployment backs up with D1 Time Travel and an R2 listing, not online backups: see docs/operations.md');
  const now = env.clock.now().toISOString();
  const [queued] = await env.db.batch([enqueueBackupStatement(env.db, now)]);
  const id = (queued as { results?: { id: number }[] }).results?.[0]?.id;
  if (id === undefined) {
    const running = await backupInFlight(env.db);
    if (running) return BackupStarted.send({ job: running, queued: false, follow: FOLLOW }, 202);
    throw conflict('a backup finished while this one was being queued: ask again');
  }
  await auditStatement(env.db, { action: 'backup.start', target_type: 'backup', target_id: String(id), details: {} }, now, env.actor).run();
  await env.jobs.notify(queuedCount([queued]));
  return BackupStarted.send({ job: (await getJob(env.db, id))!, queued: true, follow: FOLLOW }, 202);
}

// `available` is false where the deployment has no online backups (Workers).
const Backups = answer('backups', z.object({ backups: z.array(JobRecord), available: z.boolean() }));

const SHOWN = 20;

/**
 * GET /api/admin/backups: the latest backup jobs, newest first, each with its progress
 * (`files_done`, `files_total`, `bytes_written`) or its result (`archive`, `bytes`, `files`,
 * `missing`, `schema`) in its payload.
 */
export async function handleBackupsList(_request: Request, env: Env): Promise<Response> {
  return Backups.send({ backups: await listBackupJobs(env.db, SHOWN), available: env.backups !== undefined });
}

export const backupStartRoute = route(
  'post',
  '/api/admin/backup',
  'admin',
  'Start a backup of the database and the stored files into the backup folder; follow it at /api/admin/backups',
  { status: 202, answer: BackupStarted, handler: handleBackupStart },
);

export const backupsListRoute = route('get', '/api/admin/backups', 'admin', 'The latest backups with their progress or result', {
  answer: Backups,
  handler: handleBackupsList,
});
