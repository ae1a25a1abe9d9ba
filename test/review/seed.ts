import { expect } from 'vitest';
import { addEvidence, type Evidence, type NewEvidence } from '../../lib/repo/evidence.js';
import { saveAnalysisStatement, upsertSubmissionStatement } from '../../lib/repo/submissions.js';
import { recomputeRisk } from '../../lib/review/risk.js';
import { ErrorBody } from './contract.js';
import type { TestEnv } from '../helpers/env.js';
import type { Database } from '../../lib/ports.js';

export const PHASH = 'c3a1f00e9b4d2a17';

export interface SeedOptions {
  /** false leaves the submission unanalysed (no fingerprint yet). */
  analysed?: boolean;
  phash?: string;
  submittedAt?: string;
  evidence?: NewEvidence[];
}

/** A submission stored the way ingest stores one, with evidence and its risk. */
export async function seedSubmission(env: TestEnv, id: string, options: SeedOptions = {}): Promise<Evidence[]> {
  const now = env.clock.now().toISOString();
  const submittedAt = options.submittedAt ?? '2026-11-20 09:30';
  await upsertSubmissionStatement(
    env.db,
    {
      id,
      title: `title of ${id}`,
      file: `images/${id}.png`,
      origin: 'quick',
      submitted_at: submittedAt,
      submitted_at_epoch: Math.floor(Date.parse(`${submittedAt.replace(' ', 'T')}:00+09:00`) / 1000),
      width: 512,
      height: 384,
      format: 'png',
      bytes: 12345,
      sha256: 'ab'.repeat(32),
    },
    now,
  ).run();
  if (options.analysed !== false) {
    await saveAnalysisStatement(
      env.db,
      id,
      'ab'.repeat(32),
      { phash: options.phash ?? PHASH, fingerprints: { variants: [options.phash ?? PHASH] }, faces: [], people: [], thumb_path: null },
      now,
    ).run();
  }
  const evidence = await addEvidence(env.db, id, options.evidence ?? [], now);
  await recomputeRisk(env.db, id, now);
  return evidence;
}

export const webMatch = (title = 'a page with the same photo'): NewEvidence => ({
  source: 'global_vision',
  kind: 'full_match',
  group: 'web_match',
  title,
  url: 'https://pages.example/photo',
  image_url: 'https://pages.example/photo.jpg',
  similarity: 0.97,
  matched: true,
  confidence: 0.9,
});

export const webRelated = (title = 'a related page'): NewEvidence => ({
  source: 'regional',
  kind: 'image_result',
  group: 'web_related',
  title,
  url: 'https://blog.example/post',
  query: 'astronaut image',
  similarity: 0.41,
});

export const summary = (sources: string[]): NewEvidence => ({
  source: 'local_llm',
  kind: 'summary',
  group: 'supporting',
  title: 'summary of stored evidence',
  supporting: true,
  source_evidence_ids: sources,
});

export const failure = (): NewEvidence => ({
  source: 'global_search',
  kind: 'search_failed',
  group: 'failures',
  error: { code: 'provider_error', message: 'timed out' },
});

export const attentionMatch = (entryId: string): NewEvidence => ({
  source: 'watchlist',
  kind: 'attention_candidate',
  group: 'attention',
  similarity: 1,
  matched: true,
  knowledge_entry_id: entryId,
});

/** A JSON answer, after checking its status. */
export async function body<T = any>(response: Response | Promise<Response>, status = 200): Promise<T> {
  const res = await response;
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return JSON.parse(text) as T;
}

/** A refusal in the contract's error shape, with its code. */
export async function refusal(response: Response | Promise<Response>, status: number, code: string): Promise<string> {
  const answer = ErrorBody.parse(await body(response, status));
  expect(answer.error.code).toBe(code);
  return answer.error.message;
}

/** Every row of every table: to prove a refused request changed nothing. */
export async function snapshot(db: Database): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of ['submissions', 'evidence', 'knowledge_entries', 'providers', 'audit_events', 'quota_usage', 'jobs']) {
    out[table] = (await db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all()).results;
  }
  return out;
}
