import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Where runtime data lives under SVC_DATA_DIR. */
export interface DataPaths {
  dataDir: string;
  database: string;
  submissionsDir: string;
  imagesDir: string;
  registryFile: string;
  evidenceDir: string;
  derivedDir: string;
  thumbsDir: string;
  /** Where reloads write the fences that tell them the folder watcher has caught up (lib/ingest/folder-watch.ts). */
  fencesDir: string;
  /** Pictures' keypoints for the geometric check, shared by the processes on this folder (lib/images/keypoint-store.ts). */
  keypointsDir: string;
}

export function dataPaths(dataDir: string): DataPaths {
  const root = resolve(dataDir);
  return {
    dataDir: root,
    database: join(root, 'svc.sqlite3'),
    submissionsDir: join(root, 'submissions'),
    imagesDir: join(root, 'submissions', 'images'),
    registryFile: join(root, 'submissions', 'submissions.json'),
    evidenceDir: join(root, 'evidence'),
    derivedDir: join(root, 'derived'),
    thumbsDir: join(root, 'thumbs'),
    fencesDir: join(root, 'folder-watch'),
    keypointsDir: join(root, 'keypoints'),
  };
}

/** Where backups go: SVC_BACKUP_DIR, else `backups/` in the data folder. */
export function backupFolder(config: { SVC_DATA_DIR: string; SVC_BACKUP_DIR: string }): string {
  return resolve(config.SVC_BACKUP_DIR || join(config.SVC_DATA_DIR, 'backups'));
}

export function ensureDataDirs(paths: DataPaths): void {
  for (const dir of [paths.dataDir, paths.imagesDir, paths.evidenceDir, paths.derivedDir, paths.thumbsDir, paths.fencesDir])
    mkdirSync(dir, { recursive: true });
}
