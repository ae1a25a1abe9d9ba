import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { queueDailyBackup } from '../../lib/jobs/backup.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';
import { copyFixture } from '../helpers/fixtures.js';

/** POST /api/admin/backup and GET /api/admin/backups: who may, the job, its result, the rotation. */

let env: TestEnv;

beforeEach(async () => {
  env = await createTestEnv({ SVC_BACKUP_KEEP: '2' });
});
afterEach(async () => {
  await env.dispose();
});

async function operatorToken(): Promise<string> {
  const made = await (await env.call('POST', '/api/tokens', { name: 'reviewer script', role: 'operator' })).json();
  return made.secret;
}

describe('on the Node service', () => {
  it('queues one backup, answers 202 with where to follow it, and the job writes the archive into the backup folder', async () => {
    copyFixture('camera.png', join(env.dataDir, 'submissions', 'images'));
    await env.call('POST', '/api/submissions/reload');
    await env.jobs.drain('analyse');

    const started = await env.call('POST', '/api/admin/backup');
    expect(started.status).toBe(202);
    const body = await started.json();
    expect(body).toMatchObject({ queued: true, follow: '/api/admin/backups', job: { type: 'backup', status: 'queued' } });
    // A second press while it waits is the same backup, not another.
    const again = await (await env.call('POST', '/api/admin/backup')).json();
    expect(again).toMatchObject({ queued: false, job: { id: body.job.id } });

    expect(await env.jobs.drain('backup')).toBe(1);
    const listed = await (await env.call('GET', '/api/admin/backups')).json();
    expect(listed.available).toBe(true);
    const [job] = listed.backups;
    expect(job).toMatchObject({ id: body.job.id, status: 'done', payload: { files: 3, missing: 0, files_done: 3, files_total: 3 } });
    expect(job.payload.archive).toMatch(/^backup-20261121T030000Z-\d+\.tar$/);
    expect(readdirSync(join(env.dataDir, 'backups'))).toEqual([job.payload.archive]);

    // Run again, as after a crash between the archive's rename and the job's end: nothing written twice.
    await env.db.prepare("UPDATE jobs SET status = 'queued' WHERE id = ?").bind(job.id).run();
    expect(await env.jobs.drain('backup')).toBe(1);
    expect(readdirSync(join(env.dataDir, 'backups'))).toEqual([job.payload.archive]);
    expect((await (await env.call('GET', '/api/admin/backups')).json()).backups).toEqual([expect.objectContaining({ id: job.id, status: 'done' })]);

    const audit = await (await env.call('GET', '/api/audit-events?limit=5')).json();
    expect(audit.events[0]).toMatchObject({ action: 'backup.start', target_type: 'backup', target_id: String(body.job.id), actor: { type: 'admin_token' } });
  });

  it('keeps the newest SVC_BACKUP_KEEP archives and leaves the operator’s own files alone', async () => {
    const folder = join(env.dataDir, 'backups');
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      env.clock.advance(60_000);
      await env.call('POST', '/api/admin/backup');
      await env.jobs.drain('backup');
      names.push((await (await env.call('GET', '/api/admin/backups')).json()).backups[0].payload.archive);
      if (i === 0) copyFixture('rocket.jpg', folder, 'keep-me.jpg');
    }
    expect(readdirSync(folder).sort()).toEqual(['keep-me.jpg', names[1], names[2]].sort());
    expect(existsSync(join(folder, names[0]))).toBe(false);
  });

  it('refuses a reviewer (operator role) and an anonymous caller', async () => {
    const secret = await operatorToken();
    for (const [method, path] of [
      ['POST', '/api/admin/backup'],
      ['GET', '/api/admin/backups'],
    ]) {
      expect((await env.call(method, path, undefined, { authorization: `Bearer ${secret}` })).status).toBe(403);
      expect((await env.call(method, path, undefined, { authorization: '' })).status).toBe(401);
    }
    expect((await (await env.call('GET', '/api/jobs')).json()).jobs.filter((j: { type: string }) => j.type === 'backup')).toEqual([]);
  });
});

describe('the daily backup', () => {
  const backupJobs = async (on: TestEnv) => (await (await on.call('GET', '/api/admin/backups')).json()).backups;

  it('is not queued unless switched on', async () => {
    await queueDailyBackup(env);
    expect(await backupJobs(env)).toEqual([]);
  });

  it('is queued when the last good backup is a day old, never twice', async () => {
    const daily = await createTestEnv({ SVC_BACKUP_DAILY: 'true' });
    try {
      await queueDailyBackup(daily);
      await queueDailyBackup(daily);
      expect(await backupJobs(daily)).toEqual([expect.objectContaining({ status: 'queued', payload: { daily: true } })]);
      await daily.jobs.drain('backup');
      daily.clock.advance(60 * 60 * 1000);
      await queueDailyBackup(daily);
      expect((await backupJobs(daily)).map((j: { status: string }) => j.status)).toEqual(['done']);
      // The service's timer comes back a day after the last one: that backup is due.
      daily.clock.advance(23 * 60 * 60 * 1000);
      await queueDailyBackup(daily);
      expect((await backupJobs(daily)).map((j: { status: string }) => j.status)).toEqual(['queued', 'done']);
    } finally {
      await daily.dispose();
    }
  });
});
