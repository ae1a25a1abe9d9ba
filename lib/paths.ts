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
  };
}

export function ensureDataDirs(paths: DataPaths): void {
  for (const dir of [paths.dataDir, paths.imagesDir, paths.evidenceDir, paths.derivedDir, paths.thumbsDir]) mkdirSync(dir, { recursive: true });
}
