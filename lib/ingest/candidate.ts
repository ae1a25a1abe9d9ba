import { createHash } from 'node:crypto';
import { basename, extname } from 'node:path';
import type { BlobInfo } from '../ports.js';
import type { IndexedSubmission } from '../repo/ingest.js';
import type { SubmissionInput } from '../repo/submissions.js';
import { formatLocal } from '../time.js';

// Candidates: what a reload knows of a file before reading its bytes (a registry entry's fields, or a
// quick file's name and time), and what the store says of the file (its signature).

/** What a submission id may be: a registry's own, or a quick file's made from its name. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** What the store says of a file: when all three are as stored, the bytes are taken as unchanged. */
export interface FileSignature {
  size: number;
  mtimeMs: number;
  version: string;
}

export const signatureOf = (info: BlobInfo): FileSignature => ({ size: info.size, mtimeMs: Math.floor(info.modified), version: info.version });

/** What a registry entry or a quick file says about a submission, before its bytes are read. */
export type Candidate = Pick<SubmissionInput, 'id' | 'title' | 'file' | 'origin' | 'submitted_at' | 'submitted_at_epoch'> & {
  submitter: string | null;
  key: string;
  signature: FileSignature;
  /** The folder's journal says the file changed in place: read it whatever its signature says. */
  changed?: boolean;
};

/** A candidate whose file is as it was stored (size, mtime, inode) and not journalled as changed. */
export const asStored = (row: Pick<IndexedSubmission, 'bytes' | 'file_mtime_ms' | 'file_version'>, c: Candidate) =>
  !c.changed && sameSignature(row, c.signature);

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

export const sameSignature = (row: Pick<IndexedSubmission, 'bytes' | 'file_mtime_ms' | 'file_version'>, s: FileSignature) =>
  row.bytes === s.size && row.file_mtime_ms === s.mtimeMs && row.file_version === s.version;

/**
 * A minute's local text by its epoch milliseconds, each minute formatted once: files copied
 * together share their minutes, and formatting one costs more than the rest of a listed file.
 */
export function localMinutes(zone: string): (minuteMs: number) => string {
  const texts = new Map<number, string>();
  return (minuteMs) => {
    let text = texts.get(minuteMs);
    if (text === undefined) {
      text = formatLocal(new Date(minuteMs), zone);
      texts.set(minuteMs, text);
    }
    return text;
  };
}

export function quickCandidate(
  id: string,
  title: string,
  file: string,
  key: string,
  signature: FileSignature,
  minuteIn: (minuteMs: number) => string,
): Candidate {
  const minuteMs = Math.floor(signature.mtimeMs / 60_000) * 60_000;
  return {
    id,
    title,
    submitter: null,
    file,
    origin: 'quick',
    submitted_at: minuteIn(minuteMs),
    submitted_at_epoch: minuteMs / 1000,
    key,
    signature,
  };
}
