import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../http/errors.js';
import { EVIDENCE_SOURCES, REVIEW_GROUPS, type GroupKey } from '../vocabulary.js';

/**
 * The records the API answers with (CONTRACT.md section 3 and the additions the README lists),
 * field for field. The OpenAPI document is generated from these and the handlers' request schemas,
 * and the test suite checks every answer it receives against them. Objects allow fields beyond
 * those named, as the contract allows fields to be added.
 */

export const iso = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
const status = z.enum(['판단에 사용', '무관', '오탐', '보류']).nullable();
const decision = z.enum(['승인', '보류', '반려']);

/** A box in whole pixels of the upright picture. */
const pixelBox = z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() });

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
  phash: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .nullable(),
  faces: z.array(z.object({ box: pixelBox, score: z.number() })),
  people: z.array(
    z.object({ box: pixelBox, score: z.number(), face: z.number().int().nullable().describe('index in faces of the face inside this person box') }),
  ),
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
  thumb_url: z.string().startsWith('/media/thumbs/').nullable(),
  analysis_error: z.string().nullable(),
});

const matchedArea = z.object({
  quad: z
    .array(z.tuple([z.number().min(0).max(1), z.number().min(0).max(1)]))
    .min(3)
    .describe('corners as fractions of the width and height'),
  coverage: z.number().min(0).max(1).describe('share of the image the region covers'),
});

export const EvidenceRecord = z.object({
  id: z.string(),
  submission_id: z.string(),
  source: z.enum(EVIDENCE_SOURCES),
  kind: z.string(),
  group: z.enum(REVIEW_GROUPS.map((g) => g.key) as [GroupKey, ...GroupKey[]]),
  title: z.string().nullable(),
  url: z.string().nullable(),
  image_url: z.string().nullable(),
  local_media_url: z.string().startsWith('/media/').nullable(),
  query: z.string().nullable(),
  similarity: z.number().min(0).max(1).nullable(),
  matched: z.boolean(),
  match_transform: z.string().nullable(),
  match_similarity: z.number().min(0).max(1).nullable(),
  match_inliers: z.number().int().nonnegative().nullable(),
  match_region: z
    .object({ submission: matchedArea, candidate: matchedArea })
    .nullable()
    .describe('The part of each image that shows the other, when the geometric check confirmed the match'),
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
  text: z.string().nullable(),
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
  actor: z
    .object({
      type: z.enum(['account', 'token', 'admin_token', 'system', 'anonymous']),
      id: z.string().nullable(),
      name: z.string().nullable(),
      role: z.enum(['operator', 'admin']).nullable(),
      client: z.string().nullable(),
    })
    .strict(),
});

/** A web page as the service fetched it (lib/repo/captures.ts). */
export const PageCaptureRecord = z.object({
  id: z.string(),
  evidence_id: z.string(),
  submission_id: z.string(),
  page_url: z.string(),
  final_url: z.string(),
  http_status: z.number().int(),
  content_type: z.string().nullable(),
  date: z.string().nullable(),
  last_modified: z.string().nullable(),
  bytes: z.number().int(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  media_url: z.string().startsWith('/api/captures/').nullable(),
  image_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  fetched_at: iso,
});

export const ErrorBody = z
  .object({ error: z.object({ code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]), message: z.string() }) })
  .strict();

const role = z.enum(['operator', 'admin']);
const jobType = z.enum(['analyse', 'enrich', 'index']);
const jobStatus = z.enum(['queued', 'running', 'done', 'failed', 'skipped']);

export const GroupRecord = z.object({ key: z.string(), label: z.string(), evidence_ids: z.array(z.string()) });

export const JobRecord = z.object({
  id: z.number().int(),
  type: jobType,
  submission_id: z.string().nullable(),
  status: jobStatus,
  attempts: z.number().int(),
  payload: z.record(z.string(), z.unknown()),
  error: z.string().nullable(),
  created_at: iso,
  started_at: iso.nullable(),
  finished_at: iso.nullable(),
});

export const JobProgressRecord = z.object({
  active: z.boolean(),
  types: z.array(
    z.object({
      type: jobType,
      queued: z.number().int(),
      running: z.number().int(),
      done: z.number().int(),
      failed: z.number().int(),
      skipped: z.number().int(),
      rate_per_s: z.number().min(0),
      eta_s: z.number().int().nullable(),
    }),
  ),
  failures: z.array(
    z.object({ job_id: z.number().int(), type: jobType, submission_id: z.string().nullable(), error: z.string().nullable(), finished_at: iso.nullable() }),
  ),
});

export const AccountRecord = z.object({
  id: z.string(),
  username: z.string(),
  role,
  disabled: z.boolean(),
  locked_until: iso.nullable(),
  created_at: iso,
  updated_at: iso,
});

export const ApiTokenRecord = z.object({
  id: z.string(),
  name: z.string(),
  role,
  created_by: z.string().nullable(),
  created_at: iso,
  last_used_at: iso.nullable(),
  revoked_at: iso.nullable(),
});

export const QuotaAlertRecord = z.object({
  provider: z.enum(['regional', 'global_vision', 'global_search', 'local_llm']),
  day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  threshold: z.union([z.literal(80), z.literal(100)]),
  used: z.number().int(),
  daily_limit: z.number().int(),
  created_at: iso,
  attempts: z.number().int(),
  delivered_at: iso.nullable(),
  last_error: z.string().nullable(),
});

const signedIn = z.object({ account: AccountRecord, csrf_token: z.string(), expires_at: iso });

/** The answer of each JSON route, by name; the route list (functions/index.ts) points at these. */
export const Answers = {
  openapi: z.looseObject({
    openapi: z.literal('3.1.0'),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
  }),
  health: z.object({ status: z.enum(['ok', 'degraded']), version: z.string(), uptime_s: z.number(), db: z.string() }),
  session: z.object({
    signed_in: z.boolean(),
    actor: z.object({ type: z.string(), id: z.string().nullable(), name: z.string().nullable(), role }).nullable(),
    csrf_token: z.string().nullable(),
    setup_required: z.boolean(),
    setup_allowed: z.boolean(),
  }),
  signedIn,
  signedOut: z.object({ signed_out: z.literal(true) }),
  accounts: z.object({ accounts: z.array(AccountRecord) }),
  account: z.object({ account: AccountRecord }),
  sessionsRevoked: z.object({ sessions_revoked: z.number().int() }),
  tokens: z.object({ tokens: z.array(ApiTokenRecord) }),
  newToken: z.object({ token: ApiTokenRecord, secret: z.string() }),
  token: z.object({ token: ApiTokenRecord }),
  alerts: z.object({ alerts: z.array(QuotaAlertRecord), webhook_configured: z.boolean() }),
  provider: z.object({ provider: ProviderRecord }),
  providers: z.object({ providers: z.array(ProviderRecord) }),
  providersHealth: z.object({ status: z.enum(['ok', 'degraded', 'disabled']), providers: z.array(ProviderHealthRecord) }),
  emergencyDisable: z.object({ disabled: z.array(z.string()), providers: z.array(ProviderRecord) }),
  retention: z.object({
    retention_days: z.number().int(),
    cutoff: iso,
    evidence_images: z.number().int(),
    derived_images: z.number().int(),
    unreferenced_files: z.number().int(),
    failed_files: z.number().int(),
  }),
  reload: z.object({
    imported: z.array(z.string()),
    updated: z.array(z.string()),
    unchanged: z.number().int(),
    removed: z.array(z.string()),
    rejected: z.array(z.object({ file: z.string().nullable(), id: z.string().nullable(), reason: z.string() })),
    queued_jobs: z.number().int(),
    remaining: z
      .number()
      .int()
      .describe('New or changed files left for the next reload: a Worker invocation reads only so many. Always 0 on the Node service.'),
  }),
  rerun: z.object({ submission: SubmissionRecord, evidence_added: z.array(EvidenceRecord) }),
  manualSearch: z.object({
    provider: z.string(),
    query: z.string(),
    type: z.enum(['image', 'blog', 'web']),
    results: z.array(
      z.object({ title: z.string().nullable(), url: z.string().nullable(), image_url: z.string().nullable(), thumbnail_url: z.string().nullable() }),
    ),
    evidence: z.array(EvidenceRecord),
  }),
  jobs: z.object({ jobs: z.array(JobRecord) }),
  progress: JobProgressRecord,
  bootstrap: z.object({
    version: z.string(),
    queue: z.object({ items: z.array(SubmissionRecord), total: z.number().int(), next_cursor: z.string().nullable() }),
    providers: z.array(ProviderRecord),
    knowledge_counts: z.record(z.string(), z.number().int()),
    progress: JobProgressRecord,
    limits: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    statuses: z.array(z.enum(['판단에 사용', '무관', '오탐', '보류'])),
    decisions: z.array(decision),
    knowledge_states: z.array(z.enum(['주의 후보', '확정 DB 편입', '오탐 제외'])),
    groups: z.array(z.object({ key: z.string(), label: z.string() })),
  }),
  queue: z.object({ items: z.array(SubmissionRecord), total: z.number().int(), next_cursor: z.string().nullable() }),
  review: z.object({
    submission: SubmissionRecord,
    evidence: z.array(EvidenceRecord),
    groups: z.array(GroupRecord),
    knowledge_entry: KnowledgeEntryRecord.nullable(),
    captures: z.array(PageCaptureRecord),
  }),
  decision: z.object({ submission: SubmissionRecord, knowledge_entry: KnowledgeEntryRecord.nullable() }),
  evidenceStatus: z.object({ evidence: EvidenceRecord, submission: SubmissionRecord }),
  knowledge: z.object({ entries: z.array(KnowledgeEntryRecord) }),
  entry: z.object({ entry: KnowledgeEntryRecord }),
  auditEvents: z.object({ events: z.array(AuditEventRecord) }),
  pageCapture: z.object({ capture: PageCaptureRecord.nullable(), evidence_added: z.array(EvidenceRecord) }),
} as const;
