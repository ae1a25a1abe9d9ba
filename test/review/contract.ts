import { z } from 'zod';

/**
 * The records of CONTRACT.md section 3, field for field. Parsing an answer with these proves every
 * named field is there with its type; fields added beyond the contract are allowed.
 */

const iso = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
const status = z.enum(['판단에 사용', '무관', '오탐', '보류']).nullable();
const decision = z.enum(['승인', '보류', '반려']);

export const SubmissionRecord = z.object({
  id: z.string(),
  title: z.string(),
  file: z.string(),
  media_url: z.string().startsWith('/media/'),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  submitted_at: z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/),
  submitted_at_epoch: z.number().int(),
  format: z.string().nullable(),
  bytes: z.number().int().nullable(),
  sha256: z.string().nullable(),
  phash: z.string().regex(/^[0-9a-f]{16}$/).nullable(),
  faces: z.array(z.object({ box: z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() }), score: z.number() })),
  analysis_status: z.enum(['pending', 'done', 'failed']),
  enrichment_status: z.enum(['pending', 'running', 'done', 'failed', 'skipped']),
  risk: z.object({
    score: z.number().min(0).max(100),
    level: z.enum(['low', 'medium', 'high']),
    signals: z.array(z.object({ code: z.string(), label: z.string(), weight: z.number(), evidence_ids: z.array(z.string()) })),
  }),
  decision: z.object({ value: decision, note: z.string().nullable(), decided_at: iso }).nullable(),
  evidence_count: z.number().int(),
  attention_match: z.boolean(),
});

export const EvidenceRecord = z.object({
  id: z.string(),
  submission_id: z.string(),
  source: z.enum(['internal', 'watchlist', 'regional', 'global_vision', 'global_search', 'local_llm']),
  kind: z.string(),
  group: z.enum(['attention', 'watchlist', 'internal', 'web_match', 'web_related', 'supporting', 'failures']),
  title: z.string().nullable(),
  url: z.string().nullable(),
  image_url: z.string().nullable(),
  local_media_url: z.string().startsWith('/media/').nullable(),
  query: z.string().nullable(),
  similarity: z.number().min(0).max(1).nullable(),
  matched: z.boolean(),
  match_transform: z.string().nullable(),
  confidence: z.number().min(0).max(1).nullable(),
  status,
  counts_toward_score: z.boolean(),
  supporting: z.boolean(),
  face_crop: z.boolean(),
  source_evidence_ids: z.array(z.string()),
  source_urls: z.array(z.string()),
  matched_submission_id: z.string().nullable(),
  knowledge_entry_id: z.string().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  created_at: iso,
});

export const KnowledgeEntryRecord = z.object({
  id: z.string(),
  submission_id: z.string(),
  phash: z.string().regex(/^[0-9a-f]{16}$/),
  evidence_ids: z.array(z.string()),
  decision,
  state: z.enum(['주의 후보', '확정 DB 편입', '오탐 제외']),
  created_at: iso,
  updated_at: iso,
});

export const ProviderRecord = z.object({
  id: z.enum(['regional', 'global_vision', 'global_search', 'local_llm']),
  name: z.string(),
  kind: z.enum(['search', 'vision', 'llm']),
  enabled: z.boolean(),
  switched_on: z.boolean(),
  configured: z.boolean(),
  missing_env: z.array(z.string()),
  reason: z.string().nullable(),
  requiredEnv: z.array(z.string()),
  configuredEnv: z.array(z.string()),
  daily_limit: z.number().int(),
  used_today: z.number().int(),
  remaining_today: z.number().int(),
});

export const ProviderHealthRecord = ProviderRecord.extend({
  last_success_at: iso.nullable(),
  last_failure_at: iso.nullable(),
  last_error: z.string().nullable(),
});

export const AuditEventRecord = z.object({
  id: z.number().int(),
  at: iso,
  action: z.string(),
  target_type: z.string(),
  target_id: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  actor: z.object({
    type: z.enum(['account', 'token', 'admin_token', 'system', 'anonymous']),
    id: z.string().nullable(),
    name: z.string().nullable(),
    role: z.enum(['operator', 'admin']).nullable(),
    client: z.string().nullable(),
  }).strict(),
});

export const ErrorBody = z.object({ error: z.object({ code: z.string(), message: z.string() }) }).strict();
