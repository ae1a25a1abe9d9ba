import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { folderBlobStore } from '../blobs/folder.js';
import { DERIVED_AREA, EVIDENCE_AREA, SUBMISSIONS_AREA, THUMBS_AREA, submissionKey } from '../blobs/keys.js';
import { checkedKey, listPages } from '../blobs/types.js';
import { openSqlite } from '../db/sqlite.js';
import { appliedMigrations, storedMediaPaths } from '../repo/backups.js';
import { snapshotDatabase } from './snapshot.js';
import { tarWriter } from './tar.js';
import type { BackupProgress, BackupSummary } from '../ports.js';

/**
 * One consistent backup of the Node service's data while it runs: the database as SQLite's online
 * backup copies it at one instant, then the files that copy refers to, then a manifest of every
 * file with its size and SHA-256, in one tar. Files are written before the rows that name them,
 * so every file the snapshot names is already there; a file written after the snapshot is not
 * taken. The archive is written under `<name>.partial` and renamed when complete and on disk, so
 * an interrupted backup (kill -9, a full disk) never leaves a half archive under its name.
 */

export const BACKUP_FORMAT = 'image-rights-backup/1';
export const DATABASE_ENTRY = 'svc.sqlite3';
export const MANIFEST_ENTRY = 'manifest.json';
/** The areas of the data folder a backup holds; a restore accepts no other path. */
export const BACKED_UP_AREAS = [SUBMISSIONS_AREA, EVIDENCE_AREA, DERIVED_AREA, THUMBS_AREA] as const;

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  created_at: string;
  service_version: string;
  /** The highest migration applied to the database copied: its number and file name. */
  schema: { version: number; migration: string };
  files: { path: string; bytes: number; sha256: string }[];
  /** Files the snapshot names that could not be copied, with why (retention deleted one meanwhile...). */
  missing: { path: string; reason: string }[];
}

/** `0017_people.sql` -> 17. */
export const migrationNumber = (name: string) => Number.parseInt(name, 10) || 0;

/** The data folder key of a stored media path (`images/a.jpg` is the submission `submissions/images/a.jpg`). */
function storedKey(path: string): string | null {
  const key = path.startsWith('images/') ? submissionKey(path) : path;
  try {
    return BACKED_UP_AREAS.some((area) => key.startsWith(area)) ? checkedKey(key) : null;
  } catch {
    return null;
  }
}

export interface BackupOptions {
  dataDir: string;
  /** The archive to write; refused when something is already there. */
  archive: string;
  serviceVersion: string;
  now: () => Date;
  /** Told after the snapshot and then every so many files. */
  progress?: (progress: BackupProgress) => Promise<void>;
}

const PROGRESS_EVERY_MS = 1000;

export async function writeBackup(options: BackupOptions): Promise<BackupSummary> {
  const { archive, dataDir } = options;
  if (await exists(archive)) throw new Error(`${archive} exists already: choose another name`);
  const partial = `${archive}.partial`;
  const snapshot = `${archive}.partial-db`;
  await unlink(snapshot).catch(() => {});
  try {
    const createdAt = options.now();
    await snapshotDatabase(join(dataDir, DATABASE_ENTRY), snapshot);
    const { keys, migrations } = await readSnapshot(snapshot, dataDir);
    const schema = migrations.at(-1) ?? '';
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      created_at: createdAt.toISOString(),
      service_version: options.serviceVersion,
      schema: { version: migrationNumber(schema), migration: schema },
      files: [],
      missing: [],
    };
    // Its owner's alone: it holds the accounts' password hashes and every case.
    const out = await open(partial, 'w', 0o600);
    let bytes = 0;
    try {
      const tar = tarWriter(out);
      const copied = await copyFile(tar, DATABASE_ENTRY, snapshot);
      if (!copied) throw new Error('the database snapshot could not be read');
      manifest.files.push(copied);
      let told = 0;
      const tell = async (force = false) => {
        if (!options.progress || (!force && Date.now() - told < PROGRESS_EVERY_MS)) return;
        told = Date.now();
        await options.progress({ files_done: manifest.files.length, files_total: keys.length + 1, bytes_written: tar.size });
      };
      await tell(true);
      const blobs = folderBlobStore(dataDir);
      for (const key of keys) {
        // The store's rule for links: one that leaves its folder is not followed.
        const info = await blobs.head(key);
        const file = info && !info.problem ? await copyFile(tar, key, join(dataDir, key)) : null;
        if (file) manifest.files.push(file);
        else manifest.missing.push({ path: key, reason: info?.problem ?? (info ? 'it changed while it was read' : 'no file') });
        await tell();
      }
      await tar.addBytes(MANIFEST_ENTRY, Buffer.from(`${JSON.stringify(manifest, null, 1)}\n`), createdAt);
      await tar.finish();
      bytes = tar.size;
      await tell(true);
    } finally {
      await out.close();
    }
    await rename(partial, archive);
    await syncFolder(dirname(archive));
    return {
      archive: basename(archive),
      bytes,
      files: manifest.files.length,
      missing: manifest.missing.length,
      schema: manifest.schema.migration,
      created_at: manifest.created_at,
    };
  } catch (error) {
    await unlink(partial).catch(() => {});
    throw error;
  } finally {
    await unlink(snapshot).catch(() => {});
  }
}

const exists = (path: string) =>
  access(path, constants.F_OK).then(
    () => true,
    () => false,
  );

/** A rename is on the disk once its folder is. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The keys of every file the snapshot names, and the whole submissions folder (the operator's input), and its migrations. */
async function readSnapshot(snapshot: string, dataDir: string): Promise<{ keys: string[]; migrations: string[] }> {
  const db = openSqlite(snapshot, { readonly: true });
  const keys = new Set<string>();
  let migrations: string[];
  try {
    migrations = await appliedMigrations(db);
    for await (const paths of storedMediaPaths(db)) {
      for (const path of paths) {
        const key = storedKey(path);
        if (key) keys.add(key);
      }
    }
  } finally {
    db.close();
  }
  // The submissions folder is what operators put in: all of it, read or not yet reloaded.
  for await (const objects of listPages(folderBlobStore(dataDir), 'submissions/')) for (const o of objects) if (!o.problem) keys.add(o.key);
  return { keys: [...keys].sort(), migrations };
}

/** One file into the archive with its SHA-256; null when it is gone or was cut while read. */
async function copyFile(tar: ReturnType<typeof tarWriter>, name: string, path: string): Promise<BackupManifest['files'][number] | null> {
  let source;
  try {
    source = await open(path, 'r');
  } catch {
    return null;
  }
  try {
    const stat = await source.stat();
    const hash = createHash('sha256');
    const whole = await tar.addFile(name, source, stat.size, stat.mtime, (slice) => hash.update(slice));
    return whole ? { path: name, bytes: stat.size, sha256: hash.digest('hex') } : null;
  } finally {
    await source.close();
  }
}
