import { createHash } from 'node:crypto';
import { basename, extname } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Actor } from '../auth/actor.js';
import { notFound } from '../http/errors.js';
import { readMediaBytes } from '../http/media.js';
import { auditStatement, listCaseAuditEvents, type AuditEvent } from '../repo/audit.js';
import { listPageCaptureRows, type PageCaptureRow } from '../repo/captures.js';
import { listEvidence, type Evidence } from '../repo/evidence.js';
import { getKnowledgeEntryForSubmission } from '../repo/knowledge.js';
import { getSubmission, type Submission } from '../repo/submissions.js';
import { SLICE_BYTES, type ZipFile } from './zip.js';
import { submissionKey } from '../blobs/keys.js';
import type { Env } from '../ports.js';

/**
 * A case as one file a rights team can hand on: the submission image, every downloaded matched
 * image, every page capture, the cited summary, the case's audit events and a manifest that lists
 * each file with its SHA-256, where it came from and when, and the decision, who made it and the
 * risk with its signals.
 */

export const BUNDLE_FORMAT = 'image-rights-case-bundle/1';

/** One file of the bundle as the manifest lists it. */
export interface ManifestFile {
  path: string;
  role: 'submission_image' | 'matched_image' | 'page_capture' | 'summary' | 'audit_events';
  sha256: string;
  bytes: number;
  evidence_id: string | null;
  evidence_status: string | null;
  /** Where the bytes came from: the image or page address; null for what the service wrote. */
  source_url: string | null;
  /** When the bytes were fetched (or, for the submission, submitted; for generated files, now). */
  fetched_at: string;
  /** Page captures: where the fetch ended, what the server said, and the hash recorded at capture. */
  final_url?: string;
  http_status?: number;
  content_type?: string | null;
  date?: string | null;
  last_modified?: string | null;
  recorded_sha256?: string;
}

/** SHA-256 of the bytes, a slice per turn of the event loop, like the archive's CRC-32. */
async function sha256(bytes: Buffer): Promise<string> {
  const hash = createHash('sha256');
  for (let at = 0; at < bytes.length; at += SLICE_BYTES) {
    if (at > 0) await nextTurn();
    hash.update(bytes.subarray(at, at + SLICE_BYTES));
  }
  return hash.digest('hex');
}

/** File names inside the archive: ids are letters, digits, `.`, `_`, `-`; anything else becomes `_`. */
const safeName = (name: string) => name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || '_';

/** The summary as Markdown, each cited evidence id listed with its title and address. */
function summaryMarkdown(summary: Evidence, evidence: Evidence[]): string {
  const byId = new Map(evidence.map((e) => [e.id, e]));
  const lines = [`# ${summary.title ?? '근거 요약'}`, '', summary.text ?? '', '', '## 인용 근거 (cited evidence)', ''];
  for (const id of summary.source_evidence_ids) {
    const e = byId.get(id);
    lines.push(`- ${id}: ${e ? [e.title, e.url ?? e.image_url].filter(Boolean).join(' — ') : '(no longer stored)'}`);
  }
  for (const url of summary.source_urls) lines.push(`- ${url}`);
  lines.push('', `(${summary.id}, ${summary.created_at})`, '');
  return lines.join('\n');
}

export interface CaseBundle {
  submission: Submission;
  /** The archive's files, read one at a time as the stream asks; manifest.json comes last. */
  files: AsyncIterable<ZipFile>;
}

/** Gathers the case (404 for an unknown id) and lays out its files; bytes are read only when streamed. */
export async function caseBundle(env: Env, submissionId: string, actor: Actor): Promise<CaseBundle> {
  const submission = await getSubmission(env.db, submissionId);
  if (!submission) throw notFound(`unknown submission: ${submissionId}`);
  const [evidence, captures, entry, audit] = await Promise.all([
    listEvidence(env.db, submissionId),
    listPageCaptureRows(env.db, submissionId),
    getKnowledgeEntryForSubmission(env.db, submissionId),
    listCaseAuditEvents(env.db, submissionId),
  ]);
  const generatedAt = env.clock.now();
  // Evidence leaving the service is itself part of the case's history.
  await auditStatement(
    env.db,
    {
      action: 'submission.bundle',
      target_type: 'submission',
      target_id: submission.id,
      details: { evidence: evidence.length, page_captures: captures.length },
    },
    generatedAt.toISOString(),
    actor,
  ).run();
  return { submission, files: bundleFiles(env, { submission, evidence, captures, entry, audit, actor, generatedAt }) };
}

interface CaseParts {
  submission: Submission;
  evidence: Evidence[];
  captures: PageCaptureRow[];
  entry: Awaited<ReturnType<typeof getKnowledgeEntryForSubmission>>;
  audit: AuditEvent[];
  actor: Actor;
  generatedAt: Date;
}

async function* bundleFiles(env: Env, c: CaseParts): AsyncGenerator<ZipFile> {
  const files: ManifestFile[] = [];
  const missing: { evidence_id: string | null; what: string; reason: string }[] = [];
  const byId = new Map(c.evidence.map((e) => [e.id, e]));
  const file = async (
    path: string,
    bytes: Buffer,
    compress: boolean,
    modified: Date,
    listed: Omit<ManifestFile, 'path' | 'sha256' | 'bytes'>,
  ): Promise<ZipFile> => {
    files.push({ path, sha256: await sha256(bytes), bytes: bytes.length, ...listed });
    return { name: path, bytes, compress, modified };
  };

  const image = await env.blobs.get(submissionKey(c.submission.file)).catch(() => null);
  if (image) {
    yield await file(`submission/${safeName(basename(c.submission.file))}`, image, false, new Date(c.submission.submitted_at_epoch * 1000), {
      role: 'submission_image',
      evidence_id: null,
      evidence_status: null,
      source_url: null,
      fetched_at: new Date(c.submission.submitted_at_epoch * 1000).toISOString(),
    });
  } else missing.push({ evidence_id: null, what: 'submission_image', reason: 'the submitted file is no longer in the submissions folder' });

  for (const e of c.evidence.filter((x) => x.matched && x.local_media_url?.startsWith('/media/evidence/'))) {
    const bytes = await readMediaBytes(env.blobs, e.local_media_url!.slice('/media/'.length));
    if (!bytes) {
      missing.push({ evidence_id: e.id, what: 'matched_image', reason: 'the downloaded image file is gone' });
      continue;
    }
    yield await file(`matches/${safeName(e.id)}${extname(e.local_media_url!)}`, bytes, false, new Date(e.created_at), {
      role: 'matched_image',
      evidence_id: e.id,
      evidence_status: e.status,
      source_url: e.image_url,
      fetched_at: e.created_at,
    });
  }
  for (const e of c.evidence.filter((x) => x.matched && x.image_url && !x.local_media_url && x.group === 'web_match')) {
    missing.push({ evidence_id: e.id, what: 'matched_image', reason: 'deleted by the retention policy' });
  }

  // Each page of a match names its capture's file in the manifest (decision 0029).
  const captureFiles = new Map<string, string>();
  for (const capture of c.captures) {
    const bytes = capture.media_path ? await env.blobs.get(capture.media_path).catch(() => null) : null;
    if (!bytes) {
      missing.push({
        evidence_id: capture.evidence_id,
        what: 'page_capture',
        reason: capture.media_path ? 'the stored page file is gone' : 'deleted by the retention policy',
      });
      continue;
    }
    const path = `pages/${safeName(capture.id)}${extname(capture.media_path!)}`;
    captureFiles.set(capture.id, path);
    yield await file(path, bytes, true, new Date(capture.fetched_at), {
      role: 'page_capture',
      evidence_id: capture.evidence_id,
      evidence_status: byId.get(capture.evidence_id)?.status ?? null,
      source_url: capture.page_url,
      fetched_at: capture.fetched_at,
      final_url: capture.final_url,
      http_status: capture.http_status,
      content_type: capture.content_type,
      date: capture.date_header,
      last_modified: capture.last_modified,
      recorded_sha256: capture.sha256,
    });
  }

  const summary = c.evidence.filter((e) => e.kind === 'summary' && e.supporting).sort((a, b) => b.created_at.localeCompare(a.created_at))[0];
  if (summary) {
    yield await file('summary.md', Buffer.from(summaryMarkdown(summary, c.evidence), 'utf8'), true, c.generatedAt, {
      role: 'summary',
      evidence_id: summary.id,
      evidence_status: summary.status,
      source_url: null,
      fetched_at: summary.created_at,
    });
  }
  yield await file('audit-events.json', Buffer.from(JSON.stringify(c.audit, null, 2), 'utf8'), true, c.generatedAt, {
    role: 'audit_events',
    evidence_id: null,
    evidence_status: null,
    source_url: null,
    fetched_at: c.generatedAt.toISOString(),
  });

  const decisionEvent = c.audit.filter((a) => a.action === 'submission.decision' || a.action === 'submission.decision_change').at(-1);
  const { submission: s } = c;
  const manifest = {
    format: BUNDLE_FORMAT,
    generated_at: c.generatedAt.toISOString(),
    generated_by: { type: c.actor.type, id: c.actor.id, name: c.actor.name, role: c.actor.role },
    submission: {
      id: s.id,
      title: s.title,
      file: s.file,
      sha256: s.sha256,
      phash: s.phash,
      format: s.format,
      bytes: s.bytes,
      width: s.width,
      height: s.height,
      submitted_at: s.submitted_at,
      submitted_at_epoch: s.submitted_at_epoch,
    },
    decision: s.decision
      ? {
          ...s.decision,
          decided_by: decisionEvent
            ? { type: decisionEvent.actor.type, id: decisionEvent.actor.id, name: decisionEvent.actor.name, role: decisionEvent.actor.role }
            : null,
        }
      : null,
    risk: s.risk,
    knowledge_entry: c.entry
      ? { id: c.entry.id, state: c.entry.state, decision: c.entry.decision, evidence_ids: c.entry.evidence_ids, updated_at: c.entry.updated_at }
      : null,
    files,
    missing,
    evidence: c.evidence.map((e) => ({
      id: e.id,
      source: e.source,
      kind: e.kind,
      group: e.group,
      status: e.status,
      counts_toward_score: e.counts_toward_score,
      title: e.title,
      url: e.url,
      image_url: e.image_url,
      similarity: e.similarity,
      matched: e.matched,
      match_transform: e.match_transform,
      error: e.error,
      created_at: e.created_at,
      page_count: e.page_count,
      pages: e.pages.map((p) => ({ url: p.url, title: p.title, file: (p.capture && captureFiles.get(p.capture.id)) ?? null, error: p.error })),
    })),
  };
  yield { name: 'manifest.json', bytes: Buffer.from(JSON.stringify(manifest, null, 2), 'utf8'), compress: true, modified: c.generatedAt };
}
