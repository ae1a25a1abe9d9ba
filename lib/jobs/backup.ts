import { enqueueDailyBackupStatement, saveBackupPayload } from '../repo/backups.js';
import { queuedCount, type Job } from '../repo/jobs.js';
import type { Env } from '../ports.js';
import type { JobOutcome } from './loops.js';

/**
 * The `backup` job: one archive into the backup folder through the backups port, its progress and
 * then its result kept in the job's payload. Queued by POST /api/admin/backup and the daily timer
 * (server.ts); a Worker has no backups port and never queues one (docs/operations.md).
 */
export async function runBackupJob(env: Env, job: Job): Promise<JobOutcome> {
  if (!env.backups) return { status: 'failed', error: 'this deployment has no online backup: see docs/operations.md' };
  const archive = backupName(job);
  // Run again with its archive already written: after a crash between the rename and the job's
  // end, or in a service restored from that very archive, whose copy shows this job running.
  if (await env.backups.has(archive)) return { status: 'done' };
  let last = {};
  const summary = await env.backups.write(archive, (progress) => {
    last = progress;
    return saveBackupPayload(env.db, job.id, { ...job.payload, archive, ...progress });
  });
  await saveBackupPayload(env.db, job.id, { ...job.payload, ...last, ...summary });
  env.log.info('backup written', { ...summary });
  return { status: 'done' };
}

/** `backup-20261121T030000Z-42.tar`: sorted by time, and the same for a job run again after a crash. */
export function backupName(job: Job): string {
  return `backup-${job.created_at.replace(/[-:]/g, '').replace(/\.\d+/, '')}-${job.id}.tar`;
}

/** A day, less an hour, so that the timer's next day (server.ts) always finds the last backup due. */
const DAILY_MS = 23 * 60 * 60 * 1000;

/** With SVC_BACKUP_DAILY: queues a backup unless one succeeded within the last day or one is in flight. */
export async function queueDailyBackup(env: Env): Promise<void> {
  if (!env.config.SVC_BACKUP_DAILY || !env.backups) return;
  const now = env.clock.now();
  const [queued] = await env.db.batch([enqueueDailyBackupStatement(env.db, now.toISOString(), new Date(now.getTime() - DAILY_MS).toISOString())]);
  const count = queuedCount([queued]);
  if (count) {
    env.log.info('daily backup queued');
    await env.jobs.notify(count);
  }
}
