import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, extname, isAbsolute, join, sep } from 'node:path';
import { z } from 'zod';
import { analyseSubmission, refreshSimilarity } from './analysis.js';
import type { Env } from './env.js';
import { describeIssues } from './http.js';
import { ImageRejected, probeImage } from './images/decode.js';
import { auditStatement } from './repo/audit.js';
import { enqueueJobStatement } from './repo/jobs.js';
import { listSubmissionRows, updateSubmissionMetaStatement, upsertSubmissionStatement, type SubmissionInput, type SubmissionRow } from './repo/submissions.js';
import { formatLocal, parseLocal } from './time.js';

/**
 * `POST /api/submissions/reload`: the registry file and the images folder become submissions.
 * Idempotent: unchanged files change nothing, a new title or time updates the record, new bytes
 * re-analyse. Each refused file or entry is reported with its reason while the rest import.
 */

export interface ReloadReport {
  imported: string[];
  updated: string[];
  unchanged: number;
  rejected: { file: string | null; id: string | null; reason: string }[];
  queued_jobs: number;
}

export const ENRICH_JOB = 'enrich';

const REGISTRY_NAME = 'submissions.json';
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const RegistryEntry = z
  .object({
    id: z.string().regex(ID_PATTERN, 'letters, digits, dot, dash or underscore, at most 128, not starting with a dot or dash'),
    title: z.string().trim().min(1).max(500),
    file: z.string().min(1).max(1024),
    width: z.number().int().positive(),
    height: z.number().int().positive(),
    submitted_at: z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/, 'expected YYYY-MM-DD HH:MM'),
  })
  .strict();

/** What a registry entry or a quick file says about a submission, before its bytes are read. */
type Candidate = Pick<SubmissionInput, 'id' | 'title' | 'file' | 'origin' | 'submitted_at' | 'submitted_at_epoch'> & { absolutePath: string };

/** Quick ids: the file name without extension, lowercased, other characters as dashes. */
export function quickId(fileName: string): string {
  const stem = basename(fileName, extname(fileName));
  const slug = stem
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);
  return slug && /^[a-z0-9]/.test(slug) && ID_PATTERN.test(slug) ? slug : `image-${createHash('sha256').update(fileName).digest('hex').slice(0, 8)}`;
}

/** Quick titles: the file name without extension, separators as spaces. */
export function quickTitle(fileName: string): string {
  return basename(fileName, extname(fileName)).replace(/[_-]+/g, ' ').replace(/\s+/g, ' ').trim() || fileName;
}

/** Resolves `images/<name>` inside the images folder, following links, or says why not. */
async function resolveRegistryFile(env: Env, file: string): Promise<{ path: string } | { reason: string }> {
  if (isAbsolute(file) || file.includes('\\') || file.includes('\0')) return { reason: 'file must be a relative path of the form images/<file_name>' };
  const parts = file.split('/');
  if (parts.length !== 2 || parts[0] !== 'images' || parts[1] === '' || parts[1] === '.' || parts[1] === '..') {
    return { reason: 'file leaves data/submissions/images/ (expected images/<file_name>)' };
  }
  const path = join(env.paths.imagesDir, parts[1]);
  try {
    const real = await realpath(path);
    const root = await realpath(env.paths.imagesDir);
    if (!real.startsWith(root + sep)) return { reason: 'file is a link that leaves data/submissions/images/' };
    if (!(await stat(real)).isFile()) return { reason: 'file is not a regular file' };
  } catch {
    return { reason: 'file does not exist' };
  }
  return { path };
}

type RegistryRead = { entries: unknown[] } | { error: string } | null;

async function readRegistry(env: Env): Promise<RegistryRead> {
  let text: string;
  try {
    text = await readFile(env.paths.registryFile, 'utf8');
  } catch {
    return null;
  }
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    return { error: `registry is not valid JSON (${error instanceof Error ? error.message : 'parse error'}); nothing was imported from it` };
  }
  if (!Array.isArray(data)) return { error: 'registry must be a JSON array of entries; nothing was imported from it' };
  return { entries: data };
}

export async function reload(env: Env): Promise<ReloadReport> {
  const report: ReloadReport = { imported: [], updated: [], unchanged: 0, rejected: [], queued_jobs: 0 };
  const stored = new Map((await listSubmissionRows(env.db)).map((r) => [r.id, r]));
  const storedByFile = new Map([...stored.values()].map((r) => [r.file, r]));
  const candidates: Candidate[] = [];
  const claimedIds = new Set<string>();
  const claimedFiles = new Set<string>();
  const zone = env.config.SVC_TIMEZONE;

  const registry = await readRegistry(env);
  if (registry && 'error' in registry) report.rejected.push({ file: REGISTRY_NAME, id: null, reason: registry.error });
  for (const raw of registry && 'entries' in registry ? registry.entries : []) {
    const parsed = RegistryEntry.safeParse(raw);
    const rawObj = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const label = { file: typeof rawObj.file === 'string' ? rawObj.file : null, id: typeof rawObj.id === 'string' ? rawObj.id : null };
    // A file named by any entry, valid or not, belongs to the registry: never imported as a quick submission.
    if (label.file && /^images\/[^/\\]+$/.test(label.file)) claimedFiles.add(label.file.slice('images/'.length));
    if (!parsed.success) {
      report.rejected.push({ ...label, reason: `invalid entry: ${describeIssues(parsed.error)}` });
      continue;
    }
    const entry = parsed.data;
    if (claimedIds.has(entry.id)) {
      report.rejected.push({ ...label, reason: `duplicate id ${entry.id} in the registry` });
      continue;
    }
    claimedIds.add(entry.id);
    const epoch = parseLocal(entry.submitted_at, zone);
    if (epoch === null) {
      report.rejected.push({ ...label, reason: `submitted_at ${entry.submitted_at} is not a real time` });
      continue;
    }
    const resolved = await resolveRegistryFile(env, entry.file);
    if ('reason' in resolved) {
      report.rejected.push({ ...label, reason: resolved.reason });
      continue;
    }
    const owner = storedByFile.get(entry.file);
    if (owner && owner.id !== entry.id) {
      report.rejected.push({ ...label, reason: `file already belongs to submission ${owner.id}` });
      continue;
    }
    const holder = stored.get(entry.id);
    if (holder && holder.origin === 'quick' && holder.file !== entry.file) {
      report.rejected.push({ ...label, reason: `id ${entry.id} is already used by the quick submission of ${holder.file}` });
      continue;
    }
    candidates.push({ id: entry.id, title: entry.title, file: entry.file, origin: 'registry', submitted_at: entry.submitted_at, submitted_at_epoch: epoch, absolutePath: resolved.path });
  }

  const names = (await readdir(env.paths.imagesDir).catch(() => [] as string[])).filter((n) => !n.startsWith('.')).sort();
  const takenIds = new Set([...claimedIds, ...[...stored.values()].filter((r) => r.origin === 'registry').map((r) => r.id)]);
  for (const name of names) {
    if (claimedFiles.has(name)) continue;
    const file = `images/${name}`;
    const path = join(env.paths.imagesDir, name);
    const info = await lstat(path).catch(() => null);
    if (!info || info.isDirectory()) continue;
    if (info.isSymbolicLink()) {
      const target = await realpath(path).catch(() => null);
      const root = await realpath(env.paths.imagesDir);
      if (!target || !target.startsWith(root + sep)) {
        report.rejected.push({ file, id: null, reason: 'file is a link that leaves data/submissions/images/' });
        continue;
      }
    }
    const existing = storedByFile.get(file);
    if (existing?.origin === 'registry') continue;
    let id = existing?.id;
    if (!id) {
      const base = quickId(name);
      id = base;
      for (let n = 2; takenIds.has(id) || (stored.has(id) && stored.get(id)!.file !== file); n++) id = `${base}-${n}`;
    }
    takenIds.add(id);
    const mtime = (await stat(path)).mtime;
    mtime.setSeconds(0, 0);
    candidates.push({ id, title: existing?.title ?? quickTitle(name), file, origin: 'quick', submitted_at: formatLocal(mtime, zone), submitted_at_epoch: Math.floor(mtime.getTime() / 1000), absolutePath: path });
  }

  const toAnalyse: string[] = [];
  for (const c of candidates) {
    const outcome = await importCandidate(env, c, stored.get(c.id) ?? null);
    if ('reason' in outcome) report.rejected.push({ file: c.file, id: c.id, reason: outcome.reason });
    else if (outcome.kind === 'imported') report.imported.push(c.id);
    else if (outcome.kind === 'unchanged') report.unchanged++;
    else report.updated.push(c.id);
    if (!('reason' in outcome) && outcome.analyse) toAnalyse.push(c.id);
  }

  await analyseAndCompare(env, toAnalyse);

  const now = env.clock.now().toISOString();
  const jobs = toAnalyse.map((id) => enqueueJobStatement(env.db, ENRICH_JOB, id, {}, now));
  const results = jobs.length ? ((await env.db.batch(jobs)) as { meta: { changes: number } }[]) : [];
  report.queued_jobs = results.reduce((n, r) => n + (r.meta?.changes ?? 0), 0);
  await auditStatement(
    env.db,
    {
      action: 'submission.reload',
      target_type: 'submissions',
      target_id: null,
      details: { imported: report.imported, updated: report.updated, unchanged: report.unchanged, rejected: report.rejected.length, queued_jobs: report.queued_jobs },
    },
    now,
  ).run();
  return report;
}

type ImportOutcome = { kind: 'imported' | 'updated' | 'unchanged'; analyse: boolean } | { reason: string };

async function importCandidate(env: Env, c: Candidate, existing: SubmissionRow | null): Promise<ImportOutcome> {
  let bytes: Buffer;
  try {
    bytes = await readFile(c.absolutePath);
  } catch {
    return { reason: 'file cannot be read' };
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const now = env.clock.now().toISOString();
  if (existing && existing.sha256 === sha256 && existing.file === c.file) {
    const metaChanged = existing.title !== c.title || existing.submitted_at !== c.submitted_at || existing.submitted_at_epoch !== c.submitted_at_epoch;
    if (metaChanged) await updateSubmissionMetaStatement(env.db, c.id, c, now).run();
    // A submission whose analysis never finished (the process died) is analysed again.
    const analyse = existing.analysis_status === 'pending';
    return { kind: metaChanged || analyse ? 'updated' : 'unchanged', analyse };
  }
  let probe;
  try {
    probe = await probeImage(bytes, env.config.SVC_MAX_IMAGE_PIXELS);
  } catch (error) {
    if (error instanceof ImageRejected) return { reason: error.reason };
    throw error;
  }
  await upsertSubmissionStatement(
    env.db,
    { ...c, width: probe.width, height: probe.height, format: probe.format, bytes: bytes.length, sha256 },
    now,
  ).run();
  return { kind: existing ? 'updated' : 'imported', analyse: true };
}

/** Internal-match partners of the given submissions, in either direction. */
async function partnersOf(env: Env, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const placeholders = ids.map(() => '?').join(',');
  const rows = await env.db
    .prepare(
      `SELECT submission_id AS id FROM evidence WHERE group_key = 'internal' AND matched_submission_id IN (${placeholders})
       UNION SELECT matched_submission_id FROM evidence WHERE group_key = 'internal' AND submission_id IN (${placeholders})`,
    )
    .bind(...ids, ...ids)
    .all<{ id: string | null }>();
  return rows.results.flatMap((r) => (r.id && !ids.includes(r.id) ? [r.id] : []));
}

/**
 * Analyses new or changed submissions, then refreshes the similarity evidence of them and of every
 * submission they matched before or match now, so both sides of a match show it.
 */
export async function analyseAndCompare(env: Env, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const before = await partnersOf(env, ids);
  for (const id of ids) await analyseSubmission(env, id);
  await refreshSimilarity(env, ids);
  await refreshSimilarity(env, new Set([...before, ...(await partnersOf(env, ids))]));
}
