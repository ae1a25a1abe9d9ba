import { setImmediate as nextTurn } from 'node:timers/promises';
import type { z } from 'zod';
import type { ReloadReportRecord } from '../api/records.js';
import { listPages } from '../blobs/types.js';
import { describeIssues } from '../http/json.js';
import { auditStatement } from '../repo/audit.js';
import { withLease } from '../repo/leases.js';
import { enqueueJobStatement, queuedCount, queueOwedWork } from '../repo/jobs.js';
import { retitleSubmissionsStatement, upsertSubmissionStatement, type SubmissionInput } from '../repo/submissions.js';
import {
  keepRefusalsStatements,
  refusalsPage,
  listSubmissionMeta,
  refusalsOf,
  storedIds,
  submissionsOfFiles,
  submissionIndexPage,
  type IndexedSubmission,
  type Refusal,
} from '../repo/ingest.js';
import { IMAGES_PREFIX } from '../blobs/keys.js';
import { markFolderClean, readFolderJournal, type FolderJournal } from '../repo/folder-journal.js';
import {
  getReloadReport,
  latestReloadReport,
  listReloadItems,
  saveReloadReport,
  standingItems,
  type ReloadList,
  type StandingItem,
} from '../repo/reload-reports.js';
import { serialized } from '../db/serial.js';
import { progressWriter, type ProgressWriter } from './reload-progress.js';
import { asStored, localMinutes, quickCandidate, quickId, quickTitle, sameSignature, signatureOf, type Candidate, type FileSignature } from './candidate.js';
import { importCandidate, type ImportOutcome } from './import-file.js';
import { readRegistry, REGISTRY_NAME, RegistryEntry, resolveRegistryFile } from './registry.js';
import { sortInTurns } from './sort-in-turns.js';
import { parseLocal } from '../time.js';
import type { BlobInfo, Env } from '../ports.js';
import { mapLimit } from '../threads/map-limit.js';

/**
 * `POST /api/submissions/reload`: the registry file and the images folder become submissions.
 * Idempotent: unchanged files change nothing (and are not read), a new title or time updates the
 * record, new bytes queue an analysis. Each refused file or entry is reported with its reason
 * while the rest import.
 */

export type ReloadReport = z.infer<typeof ReloadReportRecord>;

/** A refused registry entry or file; `registry` for the registry's, which only a full pass settles again. */
type Rejection = ReloadReport['rejected'][number] & { registry?: true };

/**
 * A pass's report as it is saved: imports and updates whole; removals and refusals whole from a
 * full pass, or, from a pass that does not list the folder, those it found after the ones that
 * stand, less the ones it settled (`ended`: removals by submission id, refusals by file).
 */
type PassReport = Omit<ReloadReport, 'rejected'> & { rejected: Rejection[]; ended?: Record<'removed' | 'rejected', string[]> };

/** How a refused registry entry or file is named in the report. */
type Label = { file: string | null; id: string | null };

// Rows are read in pages so that no single read holds the event loop at 100,000 submissions (on a
// loaded machine a page of 2,000 took 20-50 ms, one of 1,000 still 20-40 with the collections of
// the growing index).
const INDEX_PAGE = 500;
// Refused files read at once: a full pass beside 200,000 of them read them in one statement.
const REFUSALS_PAGE = 2000;
// Files read at once: enough to keep the disk, the thread pool and the store's worker threads busy.
const FILE_CONCURRENCY = 64;
// Subrequests (a Worker invocation has a budget of them): reading one new or changed file costs
// the store read and the image service's probe; some are kept for what a reload does after its
// reads (the queue notice for its jobs).
const SUBREQUESTS = { perRead: 2, reserve: 10 };
// Stored rows or candidates looked at between turns of the event loop.
const COMPARE_SLICE = 1000;
// Ids the answer and its audit event name of each list (a first pass over a million files imports
// a million); the kept report pages them all.
const LISTED = 100;

interface StoredIndex {
  byId: Map<string, IndexedSubmission>;
  byFile: Map<string, IndexedSubmission>;
  registryIds: Set<string>;
  /** Files whose bytes were refused, by file. */
  refused: Map<string, Refusal>;
}

/** Every refused file and stored submission, page by page, each page indexed before the next is read. */
async function readStoredIndex(env: Env): Promise<StoredIndex> {
  const index: StoredIndex = { byId: new Map(), byFile: new Map(), registryIds: new Set(), refused: new Map() };
  for (let after = ''; ; await yieldToEvents()) {
    const refusals = await refusalsPage(env.db, after, REFUSALS_PAGE);
    for (const r of refusals) index.refused.set(r.file, r);
    if (refusals.length < REFUSALS_PAGE) break;
    after = refusals[refusals.length - 1].file;
  }
  for (let after = ''; ; ) {
    const { rows, last } = await submissionIndexPage(env.db, after, INDEX_PAGE);
    const registryIds: string[] = [];
    for (const row of rows) {
      index.byId.set(row.id, row);
      index.byFile.set(row.file, row);
      if (row.origin === 'registry') registryIds.push(row.id);
    }
    if (registryIds.length > 0) {
      for (const id of registryIds) index.registryIds.add(id);
      for (const meta of await listSubmissionMeta(env.db, registryIds)) Object.assign(index.byId.get(meta.id)!, meta);
    }
    if (rows.length < INDEX_PAGE || !last) return index;
    after = last;
    await yieldToEvents();
  }
}

/** Lets waiting requests run between slices of a long pass. */
const yieldToEvents = () => nextTurn();

/**
 * One reload at a time: a second one waits for the first, so no file is imported twice, within a
 * process (in memory) and across processes and Worker isolates (a lease in the database). The
 * reload is an index pass (what is new, changed or gone); analysis and enrichment are queued jobs.
 * `full` lists and compares the whole folder whatever the journal says.
 */
export function reload(env: Env, options: { full?: boolean } = {}): Promise<KeptReloadReport> {
  return serialized('reload', () => withLease(env.db, env.clock, 'reload', () => journalledPass(env, options.full ?? false)));
}

/** A reload's answer: the counts, the first of each list, and the kept report's id (GET /api/reloads/{report_id} pages the whole lists). */
export type KeptReloadReport = ReloadReport & { counts: Record<ReloadList, number>; report_id: string };

/**
 * While a folder watcher runs (the Node service: lib/ingest/folder-watch.ts) and has seen every
 * change since the last pass, the reload costs what changed: with nothing journalled the answer is
 * that pass's, every import and update now unchanged; with files named, only those are looked at
 * (namedPass). Otherwise (no watcher, a start since, a burst it may not have seen whole, a new
 * registry, or asked for) a full pass, which reads again the files journalled as changed in place
 * even when their size and times are as stored.
 */
async function journalledPass(env: Env, full: boolean): Promise<KeptReloadReport> {
  const { journal, clean } = await trustedJournal(env, full);
  const report = (clean && !journal.changed ? await quietPass(env, clean) : null) ?? (await passWithProgress(env, journal, clean));
  const now = env.clock.now().toISOString();
  const reportId = await saveReloadReport(env.db, savedLists(report), now);
  await markFolderClean(env.db, journal, reportId);
  const answer = await keptAnswer(env, report, reportId);
  await auditReload(env, answer);
  return answer;
}

/** The report's lists as they are saved: a full pass's removals and refusals whole, another's as changes to the standing ones. */
function savedLists({ removed, rejected, ended, ...rest }: PassReport) {
  const item = (id: string) => ({ id, file: null, reason: null, registry: false });
  const refusals: StandingItem[] = rejected.map(({ registry, ...r }) => ({ ...r, registry: registry ?? false }));
  return {
    ...rest,
    removed: ended ? { ended: ended.removed, added: removed.map(item) } : { whole: removed.map(item) },
    rejected: ended ? { ended: ended.rejected, added: refusals } : { whole: refusals },
  };
}

/** The answer from the kept report: its counts and the first of each list, in the report's order. */
async function keptAnswer(env: Env, report: PassReport, reportId: string): Promise<KeptReloadReport> {
  const kept = await getReloadReport(env.db, reportId);
  if (!kept) throw new Error(`reload report ${reportId} was not kept`);
  const first = (list: ReloadList) => listReloadItems(env.db, reportId, list, -1, LISTED);
  return {
    imported: report.imported.slice(0, LISTED),
    updated: report.updated.slice(0, LISTED),
    unchanged: report.unchanged,
    removed: (await first('removed')).map((item) => item.id ?? ''),
    rejected: (await first('rejected')).map(({ file, id, reason }) => ({ file, id, reason: reason ?? '' })),
    queued_jobs: report.queued_jobs,
    remaining: report.remaining,
    counts: kept.counts,
    report_id: reportId,
  };
}

/**
 * The folder journal, with the last clean pass's report when the journal can be trusted: a watcher
 * runs and has journalled every change made before this reload, files still being copied in
 * included (`caughtUp`). Otherwise no report: a full pass.
 */
async function trustedJournal(env: Env, full: boolean): Promise<{ journal: FolderJournal; clean: string | null }> {
  const journal = await readFolderJournal(env.db);
  if (full || !journal.epoch || !journal.cleanReportId || !(await env.watchedFolder?.caughtUp())) return { journal, clean: null };
  const settled = await readFolderJournal(env.db);
  return { journal: settled, clean: settled.epoch ? settled.cleanReportId : null };
}

/** The named pass where the journal allows it, otherwise a full pass, with its progress shown while it runs. */
async function passWithProgress(env: Env, journal: FolderJournal, clean: string | null): Promise<PassReport> {
  const progress = progressWriter(env);
  try {
    const named = clean && !journal.unnamed ? await namedPass(env, clean, journal.changedFiles, progress) : null;
    return named ?? (await indexPass(env, journal.changedFiles, progress));
  } finally {
    await progress.clear();
  }
}

/** The report of a pass that finds nothing changed since the kept one: its removals and refusals stand. Null when that report is gone or no longer the last. */
async function quietPass(env: Env, cleanReportId: string): Promise<PassReport | null> {
  const counted = await countedByLastPass(env, cleanReportId);
  if (counted === null) return null;
  const report: PassReport = {
    imported: [],
    updated: [],
    unchanged: counted,
    removed: [],
    rejected: [],
    ended: { removed: [], rejected: [] },
    queued_jobs: 0,
    remaining: 0,
  };
  await queueOwed(env, report);
  return report;
}

/**
 * How many files the last pass counted as imported, updated or unchanged; null when its report is
 * gone or is not the last one kept (a save cut short since): the removals and refusals that stand
 * are the last report's, and only a full pass sets them again.
 */
async function countedByLastPass(env: Env, reportId: string): Promise<number | null> {
  const last = await latestReloadReport(env.db);
  return last?.id === reportId ? last.unchanged + last.counts.imported + last.counts.updated : null;
}

/**
 * A pass over the image files the journal names (added, removed, renamed or changed in place since
 * the last pass), the rest as the last pass's kept report has it: what it costs follows what
 * changed. A named file's earlier refusal ends and the file is read again. Null, for a full pass
 * instead, when the names touch what only a listing settles: a file the registry names or refused,
 * a link that leaves its folder, a new file whose quick id is taken or shared, or a kept report
 * gone or no longer the last.
 */
async function namedPass(env: Env, cleanReportId: string, names: ReadonlySet<string>, progress: ProgressWriter): Promise<PassReport | null> {
  const counted = await countedByLastPass(env, cleanReportId);
  if (counted === null) return null;
  const files = [...names].filter((name) => !name.includes('/')).map((name) => `images/${name}`);
  // Only a full pass reads the registry, so only it settles the registry's refusals.
  const refusedBefore = await standingItems(env.db, 'rejected', 'file', files);
  if (refusedBefore.some((item) => item.registry)) return null;
  const endedRefusals = new Set(refusedBefore.map((item) => item.file!));
  const rows = new Map((await submissionsOfFiles(env.db, files)).map((row) => [row.file, row]));
  const removedBefore = new Set(
    (
      await standingItems(
        env.db,
        'removed',
        'id',
        [...rows.values()].map((row) => row.id),
      )
    ).map((item) => item.id!),
  );
  const minuteIn = localMinutes(env.config.SVC_TIMEZONE);
  const report: PassReport = { imported: [], updated: [], unchanged: counted, removed: [], rejected: [], queued_jobs: 0, remaining: 0 };
  const candidates: Candidate[] = [];
  const back = new Set<string>();
  const gone: string[] = [];
  const fresh: Candidate[] = [];
  for (const [i, file] of files.entries()) {
    if ((i + 1) % COMPARE_SLICE === 0) await yieldToEvents();
    const name = file.slice('images/'.length);
    const row = rows.get(file);
    // Counted by the last pass, it is counted again below as what it comes to now.
    if (row && !removedBefore.has(row.id)) report.unchanged--;
    // The listing leaves out files being written beside their target (`*.tmp`).
    const info = name.endsWith('.tmp') ? null : await env.blobs.head(`${IMAGES_PREFIX}${name}`);
    if (info?.problem || (row?.origin === 'registry' && !info)) return null;
    if (!info) {
      if (row) gone.push(row.id);
      continue;
    }
    if (row) back.add(row.id);
    const signature = signatureOf(info);
    if (row?.origin === 'registry') candidates.push({ ...registryCandidate(row, info.key, signature), changed: true });
    else if (row) candidates.push({ ...quickCandidate(row.id, quickTitle(name), file, info.key, signature, minuteIn), changed: true });
    else if (!name.startsWith('.')) fresh.push({ ...quickCandidate(quickId(name), quickTitle(name), file, info.key, signature, minuteIn), changed: true });
  }
  const freshIds = fresh.map((c) => c.id);
  // A new file's quick id another refusal names, or another stored submission has: numbering them is a full pass's.
  const refusedIds = (await standingItems(env.db, 'rejected', 'id', freshIds)).filter((item) => !endedRefusals.has(item.file!));
  if (new Set(freshIds).size < freshIds.length || refusedIds.length > 0 || (await storedIds(env.db, freshIds)).size > 0) return null;
  candidates.push(...fresh);
  report.removed = gone.filter((id) => !removedBefore.has(id));
  report.ended = { removed: [...back].filter((id) => removedBefore.has(id)), rejected: [...endedRefusals] };
  const refused = new Map((await refusalsOf(env.db, files)).map((r) => [r.file, r]));
  const stored = new Map([...rows.values()].map((row) => [row.id, row]));
  await progress.listed(files.length);
  await readCandidates(
    env,
    report,
    candidates,
    stored,
    refusalCheck(env, refused),
    files.filter((file) => refused.has(file)),
    progress,
  );
  await queueOwed(env, report);
  return report;
}

/** A registry submission's file changed in place: its entry is as stored (the registry did not change). */
function registryCandidate(row: IndexedSubmission, key: string, signature: FileSignature): Candidate {
  return {
    id: row.id,
    title: row.title ?? '',
    submitter: row.submitter,
    file: row.file,
    origin: 'registry',
    submitted_at: row.submitted_at ?? '',
    submitted_at_epoch: row.submitted_at_epoch ?? 0,
    key,
    signature,
  };
}

async function indexPass(env: Env, changedFiles: ReadonlySet<string>, progress: ProgressWriter): Promise<PassReport> {
  const report: PassReport = { imported: [], updated: [], unchanged: 0, removed: [], rejected: [], queued_jobs: 0, remaining: 0 };
  const { byId: stored, byFile: storedByFile, registryIds, refused } = await readStoredIndex(env);
  const candidates: Candidate[] = [];
  const claimedIds = new Set<string>();
  const claimedFiles = new Set<string>();
  const zone = env.config.SVC_TIMEZONE;
  const minuteIn = localMinutes(zone);

  // The registry's entries are checked in two steps around the listing: what needs no file first
  // (shape, duplicate ids), then their files, as the listing found them. Refusals keep entry order.
  const registry = await readRegistry(env);
  if (registry && 'error' in registry) report.rejected.push({ file: REGISTRY_NAME, id: null, reason: registry.error, registry: true });
  const entries: ({ label: Label; reason: string } | { label: Label; entry: z.infer<typeof RegistryEntry> })[] = [];
  for (const raw of registry && 'entries' in registry ? registry.entries : []) {
    const rawObj = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const label = {
      file: typeof rawObj.file === 'string' ? rawObj.file.slice(0, 1024) : null,
      id: typeof rawObj.id === 'string' ? rawObj.id.slice(0, 128) : null,
    };
    // A file named by any entry, valid or not, belongs to the registry: never imported as a quick submission.
    if (label.file && /^images\/[^/\\]+$/.test(label.file)) claimedFiles.add(label.file.slice('images/'.length));
    const parsed = RegistryEntry.safeParse(raw);
    if (!parsed.success) entries.push({ label, reason: `invalid entry: ${describeIssues(parsed.error)}` });
    else if (claimedIds.has(parsed.data.id)) entries.push({ label, reason: `duplicate id ${parsed.data.id} in the registry` });
    else {
      claimedIds.add(parsed.data.id);
      entries.push({ label, entry: parsed.data });
    }
  }

  // The images folder's own files (not its subfolders), compared with the stored index as the store
  // lists them: the store gives the event loop a turn between pages, and no list of 100,000 is kept.
  const present = new Set<string>();
  const fresh: { name: string; file: string; signature: FileSignature; key: string }[] = [];
  const takenIds = new Set([...claimedIds, ...registryIds]);
  const registryFiles = new Map<string, BlobInfo>();
  const quickRejected: Rejection[] = [];
  for await (const objects of listPages(env.blobs, IMAGES_PREFIX)) {
    await progress.listed(objects.length);
    for (const info of objects) {
      const name = info.key.slice(IMAGES_PREFIX.length);
      if (name.includes('/')) continue;
      if (claimedFiles.has(name)) {
        registryFiles.set(name, info);
        continue;
      }
      if (name.startsWith('.')) continue;
      const file = `images/${name}`;
      if (info.problem) {
        quickRejected.push({ file, id: null, reason: `file is ${info.problem} (data/submissions/images/)` });
        continue;
      }
      const signature = signatureOf(info);
      present.add(file);
      const existing = storedByFile.get(file);
      if (existing?.origin === 'registry') continue;
      if (existing) {
        takenIds.add(existing.id);
        // Its time comes from the modification time, so the same signature means nothing changed,
        // unless the journal saw it changed in place. The candidate is built only for a file to read
        // (its title and minute cost more than the comparison, paid for every unchanged file).
        const changed = changedFiles.has(name);
        if (!changed && sameSignature(existing, signature)) report.unchanged++;
        else candidates.push({ ...quickCandidate(existing.id, quickTitle(name), file, info.key, signature, minuteIn), changed });
      } else fresh.push({ name, file, signature, key: info.key });
    }
  }

  for (const checked of entries) {
    const { label } = checked;
    if ('reason' in checked) {
      report.rejected.push({ ...label, reason: checked.reason, registry: true });
      continue;
    }
    const { entry } = checked;
    const epoch = parseLocal(entry.submitted_at, zone);
    if (epoch === null) {
      report.rejected.push({ ...label, reason: `submitted_at ${entry.submitted_at} is not a real time`, registry: true });
      continue;
    }
    const file = resolveRegistryFile(entry.file, registryFiles);
    if ('reason' in file) {
      report.rejected.push({ ...label, reason: file.reason, registry: true });
      continue;
    }
    const owner = storedByFile.get(entry.file);
    if (owner && owner.id !== entry.id) {
      report.rejected.push({ ...label, reason: `file already belongs to submission ${owner.id}`, registry: true });
      continue;
    }
    const holder = stored.get(entry.id);
    if (holder && holder.origin === 'quick' && holder.file !== entry.file) {
      report.rejected.push({ ...label, reason: `id ${entry.id} is already used by the quick submission of ${holder.file}`, registry: true });
      continue;
    }
    candidates.push({
      id: entry.id,
      title: entry.title,
      submitter: entry.submitter ?? null,
      file: entry.file,
      origin: 'registry',
      submitted_at: entry.submitted_at,
      submitted_at_epoch: epoch,
      key: file.key,
      signature: file.signature,
      changed: changedFiles.has(entry.file.slice('images/'.length)),
    });
  }
  report.rejected.push(...quickRejected);

  // New quick files get their ids in name order, so colliding names are numbered the same way every time.
  const named = await sortInTurns(fresh, (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const [i, f] of named.entries()) {
    if ((i + 1) % COMPARE_SLICE === 0) await yieldToEvents();
    const base = quickId(f.name);
    let id = base;
    for (let n = 2; takenIds.has(id) || (stored.has(id) && stored.get(id)!.file !== f.file); n++) id = `${base}-${n}`;
    takenIds.add(id);
    candidates.push(quickCandidate(id, quickTitle(f.name), f.file, f.key, f.signature, minuteIn));
  }
  let checked = 0;
  for (const row of stored.values()) {
    if (++checked % COMPARE_SLICE === 0) await yieldToEvents();
    if (row.origin === 'quick' && !present.has(row.file) && !claimedFiles.has(row.file.slice('images/'.length))) report.removed.push(row.id);
  }

  const refusedBefore = refusalCheck(env, refused);
  // Each file to read costs a store read and an image-service probe (a new claimant of an unchanged
  // file, a read of its rights metadata); what the invocation cannot afford is left, counted, for
  // the next reload, which finds it new or changed again.
  let affordable = env.subrequests.left() - SUBREQUESTS.reserve;
  const cost = (c: Candidate) => {
    const existing = stored.get(c.id);
    if (existing && existing.file === c.file && asStored(existing, c)) return existing.submitter === c.submitter ? 0 : 1;
    return refusedBefore(c) ? 0 : SUBREQUESTS.perRead;
  };
  const taken: Candidate[] = [];
  for (const [i, c] of candidates.entries()) {
    if ((i + 1) % COMPARE_SLICE === 0) await yieldToEvents();
    const needed = cost(c);
    if (needed <= affordable) {
      affordable -= needed;
      taken.push(c);
    } else report.remaining++;
  }

  await readCandidates(env, report, taken, stored, refusedBefore, [...refused.keys()], progress);
  await queueOwed(env, report);
  return report;
}

/**
 * A check of a candidate before it is read: a file refused before, unchanged since, is refused
 * again without being read; so is one larger than this runtime reads whole (the Worker's isolate
 * memory), by the size the store lists.
 */
function refusalCheck(env: Env, refused: ReadonlyMap<string, Refusal>): (c: Candidate) => string | null {
  return (c) => {
    const refusal = refused.get(c.file);
    if (refusal && !c.changed && sameSignature(refusal, c.signature)) return refusal.reason;
    return c.signature.size > env.maxFileBytes
      ? `file is ${megabytes(c.signature.size)}, more than the ${megabytes(env.maxFileBytes)} this service reads whole`
      : null;
  };
}

/**
 * Reads the taken candidates into the report and stores their new bytes; then keeps the new
 * refusals and forgets those of `refusedFiles` no longer refused (gone, changed or now accepted).
 */
async function readCandidates(
  env: Env,
  report: PassReport,
  taken: Candidate[],
  stored: ReadonlyMap<string, IndexedSubmission>,
  refusedBefore: (c: Candidate) => string | null,
  refusedFiles: string[],
  progress: ProgressWriter,
): Promise<void> {
  const newRefusals: Refusal[] = [];
  const stillRefused = new Set<string>();
  const readPage = (from: number) => {
    const page = taken.slice(from, from + READ_PAGE);
    return mapLimit(page, FILE_CONCURRENCY, async (c): Promise<[Candidate, ImportOutcome]> => {
      const reason = refusedBefore(c);
      return [c, reason ? { reason, refused: true } : await importCandidate(env, c, stored.get(c.id) ?? null)];
    });
  };
  // A page of files is stored while the next is read (in the store's worker threads where it has
  // them), so that the database's writes and the reading overlap.
  let reading = taken.length > 0 ? readPage(0) : null;
  for (let from = 0; reading; from += READ_PAGE) {
    await progress.reading(from, taken.length);
    const outcomes = await reading;
    reading = from + READ_PAGE < taken.length ? readPage(from + READ_PAGE) : null;
    const newBytes: SubmissionInput[] = [];
    for (const [c, outcome] of outcomes) {
      if ('reason' in outcome) {
        report.rejected.push({ file: c.file, id: c.id, reason: outcome.reason, ...(c.origin === 'registry' && { registry: true as const }) });
        if (outcome.refused) stillRefused.add(c.file);
        if (outcome.refused && !refusedBefore(c))
          newRefusals.push({
            file: c.file,
            bytes: c.signature.size,
            file_mtime_ms: c.signature.mtimeMs,
            file_version: c.signature.version,
            reason: outcome.reason,
          });
      } else if (outcome.kind === 'imported') report.imported.push(c.id);
      else if (outcome.kind === 'unchanged') report.unchanged++;
      else report.updated.push(c.id);
      if ('row' in outcome) newBytes.push(outcome.row);
    }
    report.queued_jobs += await storeNewBytes(env, newBytes);
  }
  const refusalStatements = keepRefusalsStatements(
    env.db,
    newRefusals,
    refusedFiles.filter((file) => !stillRefused.has(file)),
  );
  if (refusalStatements.length > 0) await env.db.batch(refusalStatements);
}

/** Queues the work a crash left owed (an analysis never finished, an enrichment never queued). */
async function queueOwed(env: Env, report: PassReport): Promise<void> {
  report.queued_jobs += await queueOwedWork(env.db, env.clock.now().toISOString());
}

/** Audits a reload with its lists as the answer has them (the first of each, with the counts): the report keeps them all. */
async function auditReload(env: Env, answer: KeptReloadReport): Promise<void> {
  const { counts } = answer;
  await auditStatement(
    env.db,
    {
      action: 'submission.reload',
      target_type: 'submissions',
      target_id: null,
      details: {
        imported: answer.imported,
        updated: answer.updated,
        unchanged: answer.unchanged,
        removed: answer.removed,
        counts: { imported: counts.imported, updated: counts.updated, removed: counts.removed },
        rejected: counts.rejected,
        queued_jobs: answer.queued_jobs,
        remaining: answer.remaining,
      },
    },
    env.clock.now().toISOString(),
    env.actor,
  ).run();
}

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

// New bytes stored per batch: 100 rows of about 300 bytes of JSON each. A row costs SQLite
// 130-350 µs (its search grams, FTS entry, queue counts and indexes), so a batch holds the event
// loop for 15-45 ms; the event loop gets a turn between batches.
const WRITE_PAGE = 100;
// Files read between two writes: the next page is read (in the store's worker threads where it
// has them) while this one is stored.
const READ_PAGE = 500;

/**
 * Stores the new bytes' rows with their `analyse` jobs: each page of rows and its jobs in one
 * atomic batch of three statements, so a reload of 1,000 new files costs D1 30 queries, not 2,000.
 */
async function storeNewBytes(env: Env, rows: SubmissionInput[]): Promise<number> {
  let queued = 0;
  const now = env.clock.now().toISOString();
  for (let start = 0; start < rows.length; start += WRITE_PAGE) {
    const page = rows.slice(start, start + WRITE_PAGE);
    const [, , jobs] = await env.db.batch([
      retitleSubmissionsStatement(env.db, page),
      upsertSubmissionStatement(env.db, page, now),
      enqueueJobStatement(
        env.db,
        'analyse',
        page.map((r) => r.id),
        {},
        now,
      ),
    ]);
    queued += queuedCount([jobs]);
    await yieldToEvents();
  }
  return queued;
}
