import { z } from 'zod';
import { GLOBAL_SEARCH_VENDORS } from '../config.js';
import { ERROR_STATUS, type ErrorCode } from '../http/errors.js';
import { EVIDENCE_SOURCES, REVIEW_GROUPS, type GroupKey } from '../vocabulary.js';

/**
 * The records the API answers with (CONTRACT.md section 3 and the additions docs/api.md lists),
 * field for field: the shapes several routes carry and the domain builds, which takes its types
 * from them (`z.infer`). Each route's own answer, the object around these, is declared in its
 * route file (functions/*.ts). The OpenAPI document is generated from both, and the test suite
 * checks every answer it receives against it. Objects allow fields beyond those named, as the
 * contract allows fields to be added.
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

/** A web page as the service fetched it (lib/repo/captures.ts). */
export const PageCaptureRecord = z.object({
  id: z.string(),
  evidence_id: z.string(),
  submission_id: z.string(),
  /** The address asked for: the evidence's page URL. */
  page_url: z.string(),
  /** Where the fetch ended after redirects. */
  final_url: z.string(),
  http_status: z.number().int(),
  content_type: z.string().nullable(),
  /** The server's `Date` and `Last-Modified` headers, as sent. */
  date: z.string().nullable(),
  last_modified: z.string().nullable(),
  bytes: z.number().int(),
  /** SHA-256 (hex) of the stored bytes. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** The stored HTML, served as text under /api/captures/{id}; null once retention deleted it. */
  media_url: z.string().startsWith('/api/captures/').nullable(),
  /** SHA-256 of the evidence's downloaded image at capture time, when one was stored. */
  image_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  fetched_at: iso,
});

/** A page the provider names as holding a verified match's image, with its latest capture (decision 0029). */
export const EvidencePageRecord = z.object({
  url: z.string(),
  title: z.string().nullable(),
  capture: PageCaptureRecord.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable().describe('why the last capture of this page failed'),
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
  /** The similarity that decided the match: the transformed copy's, or the geometric match's pixel agreement. */
  match_similarity: z.number().min(0).max(1).nullable(),
  /** Keypoint pairs that agree on one transform, when the geometric check confirmed the match. */
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
  /** A result's description or snippet, or the language model's summary. */
  text: z.string().nullable(),
  pages: z.array(EvidencePageRecord).describe('the pages naming a verified match, at most 20, in the provider order'),
  page_count: z.number().int().nonnegative().describe('distinct pages the provider named; above the length of pages when the list was cut'),
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
  /** Who serves the role when it has a choice (`global_search`: `custom_search` or `brave`). */
  vendor: z.enum(GLOBAL_SEARCH_VENDORS).nullable().describe('global_search: custom_search or brave (GLOBAL_SEARCH_PROVIDER); null for the others'),
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

export const ErrorBody = z
  .object({ error: z.object({ code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]), message: z.string() }) })
  .strict();

export const RoleRecord = z.enum(['operator', 'admin']);
const jobType = z.enum(['analyse', 'enrich', 'index', 'backup']);
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
  /** True while any job is queued or running. */
  active: z.boolean(),
  types: z.array(
    z.object({
      type: jobType,
      queued: z.number().int(),
      running: z.number().int(),
      done: z.number().int(),
      failed: z.number().int(),
      skipped: z.number().int(),
      /** Jobs of this type finished per second over the last minute. */
      rate_per_s: z.number().min(0),
      /** Seconds until the queued and running jobs are done at that rate; null when idle or unknown. */
      eta_s: z.number().int().nullable(),
    }),
  ),
  /** The failures of the current run (or of the last one), newest first. */
  failures: z.array(
    z.object({ job_id: z.number().int(), type: jobType, submission_id: z.string().nullable(), error: z.string().nullable(), finished_at: iso.nullable() }),
  ),
});

export const AccountRecord = z.object({
  id: z.string(),
  username: z.string(),
  role: RoleRecord,
  disabled: z.boolean(),
  locked_until: iso.nullable(),
  created_at: iso,
  updated_at: iso,
});

export const ApiTokenRecord = z.object({
  id: z.string(),
  name: z.string(),
  role: RoleRecord,
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

/** What a reload found and did (POST /api/submissions/reload). */
export const ReloadReportRecord = z.object({
  imported: z.array(z.string()),
  updated: z.array(z.string()),
  unchanged: z.number().int(),
  /** Quick submissions whose file is gone from the folder; their records and evidence are kept. */
  removed: z.array(z.string()),
  rejected: z.array(z.object({ file: z.string().nullable(), id: z.string().nullable(), reason: z.string() })),
  queued_jobs: z.number().int(),
  remaining: z.number().int().describe('New or changed files left for the next reload: a Worker invocation reads only so many. Always 0 on the Node service.'),
});

/** A search by hand (POST /api/search/manual): the provider's results, and the evidence kept when a submission was named. */
export const ManualSearchRecord = z.object({
  provider: z.string(),
  query: z.string(),
  type: z.enum(['image', 'blog', 'web']),
  results: z.array(
    z.object({ title: z.string().nullable(), url: z.string().nullable(), image_url: z.string().nullable(), thumbnail_url: z.string().nullable() }),
  ),
  evidence: z.array(EvidenceRecord),
});

/** What a retention run deleted (POST /api/retention/run and the daily job). */
export const RetentionReportRecord = z.object({
  retention_days: z.number().int(),
  cutoff: iso,
  /** Evidence records whose downloaded image was deleted (the records themselves are kept). */
  evidence_images: z.number().int(),
  /** Submissions whose derived (metadata-stripped) image was deleted. */
  derived_images: z.number().int(),
  /** Old files under evidence/ or derived/ that no record points to, such as face crops. */
  unreferenced_files: z.number().int(),
  /** Files that could not be deleted (logged; retried by age on the next run). */
  failed_files: z.number().int(),
});

/** A page of the review queue (GET /api/review-queue, and the first page in GET /api/bootstrap). */
export const QueuePageRecord = z.object({ items: z.array(SubmissionRecord), total: z.number().int(), next_cursor: z.string().nullable() });

/** A submission with everything its review shows (GET /api/submissions/{id}/review). */
export const SubmissionReviewRecord = z.object({
  submission: SubmissionRecord,
  evidence: z.array(EvidenceRecord),
  groups: z.array(GroupRecord),
  knowledge_entry: KnowledgeEntryRecord.nullable(),
  captures: z.array(PageCaptureRecord),
});
