/** The fixed vocabularies of CONTRACT.md section 2: the same words in SQL, the API and the console. */

export const EVIDENCE_STATUSES = ['판단에 사용', '무관', '오탐', '보류'] as const;
export type EvidenceStatus = (typeof EVIDENCE_STATUSES)[number];

export const DECISIONS = ['승인', '보류', '반려'] as const;
export type Decision = (typeof DECISIONS)[number];

export const KNOWLEDGE_STATES = ['주의 후보', '확정 DB 편입', '오탐 제외'] as const;
export type KnowledgeState = (typeof KNOWLEDGE_STATES)[number];
export const [ATTENTION_CANDIDATE, WATCHLIST_CONFIRMED, WATCHLIST_EXCLUDED] = KNOWLEDGE_STATES;

/** `file_metadata`: the rights fields the submitted file states about itself (local, never sent out). */
export const EVIDENCE_SOURCES = ['internal', 'watchlist', 'regional', 'global_vision', 'global_search', 'local_llm', 'file_metadata'] as const;
export type EvidenceSource = (typeof EVIDENCE_SOURCES)[number];

/** Review groups in the order the review shows them; `attention` first and set apart. */
export const REVIEW_GROUPS = [
  { key: 'attention', label: '주의 후보 근거' },
  { key: 'watchlist', label: '확정 DB 근거' },
  { key: 'internal', label: '내부 유사 제출물' },
  { key: 'rights', label: '권리 메타데이터' },
  { key: 'web_match', label: '웹 일치' },
  { key: 'web_related', label: '웹 관련 근거' },
  { key: 'supporting', label: '보조 근거' },
  { key: 'failures', label: '수집 실패' },
] as const;
export type GroupKey = (typeof REVIEW_GROUPS)[number]['key'];

export const RISK_LEVELS = ['low', 'medium', 'high'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];
