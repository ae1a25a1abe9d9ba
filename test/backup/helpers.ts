import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { scriptArgs } from '../helpers/npm-script.js';

/** `npm run backup` and `npm run restore` as an operator runs them: tsx in a child process, settings in its environment. */
const ROOT = join(import.meta.dirname, '..', '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runScript(script: 'backup' | 'restore', args: string[], env: Record<string, string> = {}): Promise<Ran> {
  try {
    const { stdout, stderr } = await promisify(execFile)(TSX, [join(ROOT, 'scripts', `${script}.ts`), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/**
 * The backup script started, not awaited: for a test that kills it. Node runs it itself, not the
 * tsx command, whose own node process a kill of tsx would leave writing the archive.
 */
export function startBackup(archive: string, dataDir: string): ChildProcess {
  return spawn(process.execPath, [...scriptArgs(ROOT, 'backup'), archive], { cwd: ROOT, env: { ...process.env, SVC_DATA_DIR: dataDir }, stdio: 'ignore' });
}

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Every file under a folder by its path relative to it, with its SHA-256. */
export function folderHashes(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.set(relative(root, path), sha256(readFileSync(path)));
    }
  };
  walk(root);
  return out;
}
