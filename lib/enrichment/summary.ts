import type { ProviderResult } from '../providers/call.js';
import { buildEvidencePrompt, type EvidencePrompt } from '../providers/local-llm.js';
import type { Evidence } from '../repo/evidence.js';

/**
 * The model is asked for claims that cite evidence ids. Its answer is cut into sentences and only
 * sentences citing at least one id that was in the prompt are kept: a claim without a source (a
 * name, a work, a verdict) never reaches the operator.
 */
export interface Summary {
  text: string;
  sourceEvidenceIds: string[];
  sourceUrls: string[];
}

const CITATION = /\[([A-Za-z0-9_]+)\]/g;

export function keepCitedClaims(answer: string, allowedIds: readonly string[]): { text: string; cited: string[] } {
  const allowed = new Set(allowedIds);
  const sentences = answer
    .replace(/\r/g, '')
    .split(/(?<=[.!?。])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
  const kept: string[] = [];
  const cited = new Set<string>();
  for (const sentence of sentences) {
    const ids = [...sentence.matchAll(CITATION)].map((m) => m[1]).filter((id) => allowed.has(id));
    if (ids.length === 0) continue;
    kept.push(sentence);
    for (const id of ids) cited.add(id);
  }
  return { text: kept.join(' '), cited: allowedIds.filter((id) => cited.has(id)) };
}

export async function summariseEvidence(
  evidence: readonly Evidence[],
  generate: (prompt: EvidencePrompt) => Promise<ProviderResult<{ text: string }>>,
): Promise<ProviderResult<Summary>> {
  const built = buildEvidencePrompt(evidence);
  const answer = await generate(built.prompt);
  if (!answer.ok) return answer;
  const { text, cited } = keepCitedClaims(answer.text, built.sourceEvidenceIds);
  if (!text) return { ok: false, error: { code: 'malformed_response', message: 'language model: no statement cited stored evidence, so nothing was kept' } };
  const urls = evidence
    .filter((e) => cited.includes(e.id))
    .flatMap((e) => [e.url, e.image_url])
    .filter((u): u is string => !!u);
  return { ok: true, text, sourceEvidenceIds: cited, sourceUrls: [...new Set(urls)] };
}
