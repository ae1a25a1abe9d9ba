import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { probeHeader } from '../images/header.js';
import { ImageRejected } from '../images/rejected.js';
import { refreshRightsEvidence } from '../matching/analysis.js';
import type { Env } from '../ports.js';
import { getSubmissionMeta, type IndexedSubmission, type SubmissionMeta } from '../repo/ingest.js';
import { updateSubmissionMetaStatement, type SubmissionInput } from '../repo/submissions.js';
import { asStored, type Candidate } from './candidate.js';

// One candidate's import during a reload: its file read and hashed only when the store says it
// changed, its header probed, and what it came to (unchanged, new title or time, new bytes, refused).

/** What a candidate came to; new bytes carry the row to store (storeNewBytes). */
export type ImportOutcome = { kind: 'unchanged' | 'updated' } | { kind: 'imported' | 'updated'; row: SubmissionInput } | { reason: string; refused?: true };

/** SHA-256 in slices, so a large file never holds the event loop for one long digest. */
async function sha256Of(bytes: Buffer): Promise<string> {
  const hash = createHash('sha256');
  const slice = 4 * 1024 * 1024;
  for (let at = 0; at < bytes.length; at += slice) {
    hash.update(bytes.subarray(at, at + slice));
    if (at + slice < bytes.length) await nextTurn();
  }
  return hash.digest('hex');
}

const stillWritten = (listed: number, read: number): ImportOutcome => ({
  reason: `file is still being written (${listed} bytes listed, ${read} read); the next reload takes it`,
});

// Bytes of a file the header reader is given: a JPEG's EXIF, ICC profile and tables fit in most.
const HEAD_BYTES = 64 * 1024;

/**
 * A file's size, SHA-256 and first bytes: read and hashed off the event loop where the store can
 * (the data folder's worker threads), otherwise read whole here (and kept for the probe).
 */
async function readFile(env: Env, key: string): Promise<{ size: number; sha256: string; head: Uint8Array; bytes: Buffer | null } | null> {
  if (env.blobs.digest) {
    const digest = await env.blobs.digest(key, HEAD_BYTES);
    return digest && { ...digest, bytes: null };
  }
  const bytes = await env.blobs.get(key).catch(() => null);
  return bytes && { size: bytes.length, sha256: await sha256Of(bytes), head: bytes, bytes };
}

/**
 * Records one candidate. A stored file with the same size, modification time and version is not
 * read; otherwise its bytes are hashed, and only new bytes are probed and queued for analysis, in
 * the same atomic batch as the record, so a crash leaves either both or neither.
 */
export async function importCandidate(env: Env, c: Candidate, existing: IndexedSubmission | null): Promise<ImportOutcome> {
  const now = env.clock.now().toISOString();
  const metaChanged = (row: SubmissionMeta) =>
    row.title !== c.title || row.submitter !== c.submitter || row.submitted_at !== c.submitted_at || row.submitted_at_epoch !== c.submitted_at_epoch;
  if (existing && existing.file === c.file && asStored(existing, c)) {
    if (!metaChanged(existing)) return { kind: 'unchanged' };
    await updateSubmissionMetaStatement(env.db, c.id, c, c.signature, now).run();
    if (existing.submitter !== c.submitter) await refreshRightsEvidence(env, c.id);
    return { kind: 'updated' };
  }
  const read = await readFile(env, c.key);
  if (!read) return { reason: 'file cannot be read' };
  // A file still being written (being copied in, saved by an editor) is another size than the
  // listing said: left for the next reload, which lists it again, rather than imported half. Not
  // remembered as refused, so nothing about it is kept.
  if (read.size !== c.signature.size) return stillWritten(c.signature.size, read.size);
  const { sha256 } = read;
  const { signature } = c;
  const row = existing ? await getSubmissionMeta(env.db, c.id) : null;
  if (existing && row && row.sha256 === sha256 && existing.file === c.file) {
    const changed = metaChanged(row);
    await updateSubmissionMetaStatement(env.db, c.id, c, signature, now).run();
    if (row.submitter !== c.submitter) await refreshRightsEvidence(env, c.id);
    return { kind: changed ? 'updated' : 'unchanged' };
  }
  let probe;
  try {
    probe = probeHeader(read.head, env.config.SVC_MAX_IMAGE_PIXELS);
    if (!probe) {
      // The header alone did not settle it: the image service probes the whole file, which must
      // still be the one hashed (a file replaced meanwhile is taken by the next reload).
      const bytes = read.bytes ?? (await env.blobs.get(c.key).catch(() => null));
      if (!bytes) return { reason: 'file cannot be read' };
      if (bytes !== read.bytes && createHash('sha256').update(bytes).digest('hex') !== sha256) return stillWritten(read.size, bytes.length);
      probe = await env.images.probe(bytes);
    }
  } catch (error) {
    // The bytes themselves are refused: remembered, so the unchanged file is not read again.
    if (error instanceof ImageRejected) return { reason: error.reason, refused: true };
    throw error;
  }
  return {
    kind: existing ? 'updated' : 'imported',
    row: {
      id: c.id,
      title: c.title,
      file: c.file,
      origin: c.origin,
      submitter: c.submitter,
      submitted_at: c.submitted_at,
      submitted_at_epoch: c.submitted_at_epoch,
      width: probe.width,
      height: probe.height,
      format: probe.format,
      bytes: read.size,
      sha256,
      file_mtime_ms: signature.mtimeMs,
      file_version: signature.version,
    },
  };
}
