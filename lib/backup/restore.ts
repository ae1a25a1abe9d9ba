import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, rename, rm, rmdir, utimes } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { checkedKey } from '../blobs/types.js';
import { migrationFiles } from '../db/migrate.js';
import { openSqlite } from '../db/sqlite.js';
import { appliedMigrations } from '../repo/backups.js';
import { BACKED_UP_AREAS, BACKUP_FORMAT, DATABASE_ENTRY, MANIFEST_ENTRY, migrationNumber, type BackupManifest } from './backup.js';
import { readTar, TarDamaged } from './tar.js';

/**
 * Restores a backup archive (backup.ts) into an empty or new data folder. Everything is unpacked
 * into a hidden folder beside the target and checked there: every file against the manifest's size
 * and SHA-256, nothing missing or extra, and a schema no newer than this code's migrations. Only
 * then does the folder take the target's name, so a refused or interrupted restore leaves the
 * target as it was.
 */

/** Why a restore was refused: one line for the operator. */
export class RestoreRefused extends Error {}

const MANIFEST_LIMIT = 512 * 1024 * 1024;

export interface RestoreSummary {
  data_dir: string;
  files: number;
  schema: string;
  created_at: string;
}

export async function restoreBackup(archive: string, dataDir: string): Promise<RestoreSummary> {
  const target = resolve(dataDir);
  if ((await readdir(target).catch(() => [])).length > 0) throw new RestoreRefused(`${target} is not empty: restore into an empty or new folder`);
  await mkdir(dirname(target), { recursive: true });
  const staging = await mkdtemp(join(dirname(target), `.${basename(target)}.restoring-`));
  try {
    const { manifest, found } = await unpack(archive, staging);
    checkSums(manifest, found);
    await checkSchema(join(staging, DATABASE_ENTRY));
    await rmdir(target).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await rename(staging, target);
    return { data_dir: target, files: manifest.files.length, schema: manifest.schema.migration, created_at: manifest.created_at };
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (error instanceof TarDamaged) throw new RestoreRefused(`${archive} is damaged: ${error.message}`);
    throw error;
  }
}

/** An archive entry's place under the data folder, or a refusal for any other name. */
function entryPath(name: string): string {
  if (name === DATABASE_ENTRY) return name;
  try {
    if (BACKED_UP_AREAS.some((area) => name.startsWith(area))) return checkedKey(name);
  } catch {
    // refused below
  }
  throw new RestoreRefused(`the archive holds ${JSON.stringify(name.slice(0, 200))}, which no backup writes`);
}

async function unpack(archive: string, staging: string): Promise<{ manifest: BackupManifest; found: Map<string, { bytes: number; sha256: string }> }> {
  const found = new Map<string, { bytes: number; sha256: string }>();
  let manifest: BackupManifest | null = null;
  let source;
  try {
    source = createReadStream(archive);
    await new Promise((resolve, reject) => source!.once('open', resolve).once('error', reject));
  } catch (error) {
    throw new RestoreRefused(`${archive} cannot be read: ${(error as Error).message}`);
  }
  try {
    for await (const entry of readTar(source)) {
      if (entry.name === MANIFEST_ENTRY) {
        if (entry.size > MANIFEST_LIMIT) throw new RestoreRefused('the manifest is too large');
        const parts: Buffer[] = [];
        for await (const part of entry.body) parts.push(part);
        manifest = parseManifest(Buffer.concat(parts));
        continue;
      }
      const path = entryPath(entry.name);
      if (found.has(path)) throw new RestoreRefused(`the archive holds ${path} twice`);
      const file = join(staging, path);
      await mkdir(dirname(file), { recursive: true });
      const out = await open(file, 'wx');
      const hash = createHash('sha256');
      let bytes = 0;
      try {
        for await (const part of entry.body) {
          hash.update(part);
          bytes += part.length;
          for (let done = 0; done < part.length; ) done += (await out.write(part, done)).bytesWritten;
        }
      } finally {
        await out.close();
      }
      // A quick submission's time is its file's (lib/ingest/reload.ts): the restored file keeps it.
      await utimes(file, entry.mtime, entry.mtime);
      found.set(path, { bytes, sha256: hash.digest('hex') });
    }
  } finally {
    source.destroy();
  }
  if (!manifest) throw new RestoreRefused(`${archive} has no ${MANIFEST_ENTRY}: it is not a backup, or it is incomplete`);
  return { manifest, found };
}

function parseManifest(bytes: Buffer): BackupManifest {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new RestoreRefused(`${MANIFEST_ENTRY} is not JSON`);
  }
  if (manifest?.format !== BACKUP_FORMAT || !Array.isArray(manifest.files)) throw new RestoreRefused(`${MANIFEST_ENTRY} is not a ${BACKUP_FORMAT} manifest`);
  return manifest;
}

/** Every listed file there with its size and SHA-256, nothing unlisted, the database among them. */
function checkSums(manifest: BackupManifest, found: Map<string, { bytes: number; sha256: string }>): void {
  const listed = new Set<string>();
  for (const file of manifest.files) {
    listed.add(file.path);
    const got = found.get(file.path);
    if (!got) throw new RestoreRefused(`${file.path} is in the manifest but not in the archive`);
    if (got.bytes !== file.bytes || got.sha256 !== file.sha256)
      throw new RestoreRefused(`${file.path} does not match its SHA-256 in the manifest: the archive is damaged`);
  }
  for (const path of found.keys()) if (!listed.has(path)) throw new RestoreRefused(`${path} is in the archive but not in the manifest`);
  if (!found.has(DATABASE_ENTRY)) throw new RestoreRefused(`the archive has no ${DATABASE_ENTRY}`);
}

/** The database's own record of its migrations decides, not the manifest's summary of it. */
async function checkSchema(database: string): Promise<void> {
  const known = migrationFiles().map((m) => m.name);
  const newest = known.at(-1) ?? '';
  const db = openSqlite(database, { readonly: true });
  let applied: string[];
  try {
    applied = await appliedMigrations(db);
  } catch {
    throw new RestoreRefused(`${DATABASE_ENTRY} in the archive is not a database of this service`);
  } finally {
    db.close();
  }
  const newer = applied.filter((name) => migrationNumber(name) > migrationNumber(newest));
  if (newer.length) {
    throw new RestoreRefused(
      `the backup's schema (${newer.at(-1)}) is newer than this code knows (${newest}): restore it with the version that made it, or a later one`,
    );
  }
}
