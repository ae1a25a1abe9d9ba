import { access, mkdir, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeBackup } from './backup.js';
import type { Backups, Clock } from '../ports.js';

/** The archives this folder's rotation owns: `backup-<time>-<job>.tar` (lib/jobs/backup.ts); any other file is the operator's. */
const ROTATED = /^backup-\d{8}T\d{6}Z-\d+\.tar$/;

/**
 * The backups port of the Node service: archives of `dataDir` written into `folder`, after each
 * of which only the newest `keep` rotated archives stay.
 */
export function folderBackups(options: { dataDir: string; folder: string; keep: number; version: string; clock: Clock }): Backups {
  return {
    async write(name, progress) {
      await mkdir(options.folder, { recursive: true });
      const summary = await writeBackup({
        dataDir: options.dataDir,
        archive: join(options.folder, name),
        serviceVersion: options.version,
        now: () => options.clock.now(),
        progress,
      });
      const rotated = (await readdir(options.folder))
        .filter((file) => ROTATED.test(file))
        // By time, then by job: `-9.tar` before `-10.tar`.
        .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
      for (const old of rotated.slice(0, Math.max(0, rotated.length - options.keep))) await unlink(join(options.folder, old)).catch(() => {});
      return summary;
    },
    has: (name) =>
      access(join(options.folder, name)).then(
        () => true,
        () => false,
      ),
  };
}
