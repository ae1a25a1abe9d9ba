import type { GroupKey, RiskLevel } from '../vocabulary.js';
import { rowsOf } from './columns.js';
import { COUNTS_TOWARD_SCORE } from './evidence.js';
import { fromJson, toJson } from './json.js';
import type { Risk, RiskSignal } from './submissions.js';
import type { Database, Statement } from '../ports.js';

/**
 * The risk rules as data (lib/review/risk.ts holds them), so that one statement computes a
 * submission's risk from its stored evidence and stores it (decision 0051).
 */
export interface RiskRules {
  /** A signal per rule that some counting evidence meets (its group; matched, and of a kind, when the rule says). */
  evidence: { code: string; label: string; weight: number; group: GroupKey; matched?: true; kind?: string }[];
  /** A signal per rule that who the picture shows meets: any face, or any person box with no face found inside. */
  picture: { code: string; label: string; weight: number; shows: 'faces' | 'faceless_people' }[];
  /** A counting match in one of these groups makes the level high whatever the score. */
  highGroups: GroupKey[];
  /** The score from which the level is high, and medium. */
  high: number;
  medium: number;
}

/**
 * Computes a submission's risk from its evidence and analysis as they stand when the statement
 * runs, and stores it. In the batch of the evidence writes that call for it, the risk stored is
 * always that of the evidence stored, whichever process or isolate wrote last: nothing is read,
 * computed elsewhere and written back. Signals keep the rules' order, each with its evidence in the
 * order the API shows it; the score is capped at 100.
 */
export function riskFromEvidenceStatement(db: Database, id: string, rules: RiskRules, now: string): Statement {
  return db
    .prepare(
      `WITH target AS (SELECT ? AS id, json(?) AS rules),
         counting AS (
           SELECT e.id, e.group_key, e.kind, e.matched, e.similarity, e.created_at
           FROM evidence e WHERE e.submission_id = (SELECT id FROM target) AND ${COUNTS_TOWARD_SCORE}
         ),
         shows AS (
           SELECT CASE WHEN json_valid(s.faces) AND json_type(s.faces) = 'array' THEN json_array_length(s.faces) ELSE 0 END AS faces,
             CASE WHEN json_valid(s.people) AND json_type(s.people) = 'array'
               THEN (SELECT count(*) FROM json_each(s.people) p WHERE json_type(p.value, '$.face') = 'null') ELSE 0 END AS faceless_people
           FROM submissions s WHERE s.id = (SELECT id FROM target)
         ),
         -- Materialized: inlined, the rules' JSON was read again for every evidence row the join
         -- tried (3.7 against 1.9 ms for a submission with 151 matches).
         evidence_rules AS MATERIALIZED (
           SELECT r.key AS at, json_extract(r.value, '$.code') AS code, json_extract(r.value, '$.label') AS label, json_extract(r.value, '$.weight') AS weight,
             json_extract(r.value, '$.group') AS group_key, json_extract(r.value, '$.matched') AS matched, json_extract(r.value, '$.kind') AS kind
           FROM target, json_each(target.rules, '$.evidence') r
         ),
         -- A rule's evidence is of one group, so the API's order within a group orders it.
         signals AS (
           SELECT r.at, r.code, r.label, r.weight, json_group_array(c.id ORDER BY c.similarity DESC, c.created_at, c.id) AS evidence_ids
           FROM evidence_rules r JOIN counting c ON c.group_key = r.group_key AND (r.matched IS NULL OR c.matched = 1) AND (r.kind IS NULL OR c.kind = r.kind)
           GROUP BY r.at
           UNION ALL
           SELECT 1000 + r.key, json_extract(r.value, '$.code'), json_extract(r.value, '$.label'), json_extract(r.value, '$.weight'), '[]'
           FROM target, shows, json_each(target.rules, '$.picture') r
           WHERE (json_extract(r.value, '$.shows') = 'faces' AND shows.faces > 0) OR (json_extract(r.value, '$.shows') = 'faceless_people' AND shows.faceless_people > 0)
         ),
         risk AS (
           SELECT min(100, coalesce(sum(weight), 0)) AS score,
             json_group_array(json_object('code', code, 'label', label, 'weight', weight, 'evidence_ids', json(evidence_ids)) ORDER BY at) AS signals
           FROM signals
         ),
         -- Materialized: in the EXISTS below, the rules' JSON was read again for every counting row.
         high_groups AS MATERIALIZED (SELECT value AS group_key FROM target, json_each(target.rules, '$.highGroups')),
         high_match AS (
           SELECT EXISTS (SELECT 1 FROM counting c WHERE c.matched = 1 AND c.group_key IN (SELECT group_key FROM high_groups)) AS found
         )
       UPDATE submissions SET risk_score = risk.score,
         risk_level = CASE WHEN high_match.found OR risk.score >= json_extract(target.rules, '$.high') THEN 'high'
           WHEN risk.score >= json_extract(target.rules, '$.medium') THEN 'medium' ELSE 'low' END,
         risk_signals = risk.signals, updated_at = ?
       FROM target, risk, high_match
       WHERE submissions.id = target.id
       RETURNING risk_score, risk_level, risk_signals`,
    )
    .bind(id, toJson(rules), now);
}

/** The risk a riskFromEvidenceStatement stored (none for a submission that is gone). */
export function savedRisk(result: unknown): Risk | null {
  const [row] = rowsOf<{ risk_score: number; risk_level: RiskLevel; risk_signals: string }>(result);
  return row ? { score: row.risk_score, level: row.risk_level, signals: fromJson<RiskSignal[]>(row.risk_signals, []) } : null;
}
