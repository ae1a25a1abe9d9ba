import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestEnv } from '../helpers/env.js';
import { copyFixture, reencoded } from '../helpers/fixtures.js';
import { body } from './seed.js';

/**
 * The effects of a decision, promote and exclude on later submissions of the same photo, through
 * the real ingest: images copied into the submissions folder and POST /api/submissions/reload.
 */
const env = useTestEnv();

async function reload(): Promise<string[]> {
  const { imported } = await body(env.call('POST', '/api/submissions/reload'));
  await env.jobs.drain('analyse');
  return imported;
}
async function review(id: string) {
  return body(env.call('GET', `/api/submissions/${encodeURIComponent(id)}/review`));
}
const similarityGroups = (r: any) => r.groups.map((g: any) => g.key).filter((k: string) => ['attention', 'watchlist', 'internal'].includes(k));

/** The astronaut photo submitted and rejected: its attention candidate. */
async function rejectedOriginal() {
  copyFixture('astronaut.png', env.paths.imagesDir, 'astronaut.png');
  expect(await reload()).toEqual(['astronaut']);
  const { knowledge_entry: entry } = await body(env.call('POST', '/api/submissions/astronaut/decision', { decision: '반려', note: 'copied photo' }));
  expect(entry.state).toBe('주의 후보');
  return entry;
}

async function submitAgain(name: string): Promise<any> {
  writeFileSync(join(env.paths.imagesDir, name), await reencoded('astronaut.png', 80));
  expect(await reload()).toEqual([name.replace(/\.jpg$/, '')]);
  return review(name.replace(/\.jpg$/, ''));
}

describe('later submissions of a decided photo', () => {
  it('a candidate shows a later copy in the 주의 후보 근거 group first, as a high risk, never deciding it', async () => {
    const entry = await rejectedOriginal();
    const later = await submitAgain('later.jpg');
    expect(later.groups[0]).toMatchObject({ key: 'attention', label: '주의 후보 근거' });
    const attention = later.evidence.filter((e: any) => e.group === 'attention');
    expect(attention).toEqual([expect.objectContaining({ knowledge_entry_id: entry.id, matched_submission_id: 'astronaut', matched: true })]);
    expect(later.groups[0].evidence_ids).toEqual([attention[0].id]);
    expect(later.submission).toMatchObject({ attention_match: true, decision: null });
    expect(later.submission.risk.level).toBe('high');
    expect(later.submission.risk.signals.map((s: any) => s.code)).toContain('attention_match');
  });

  it('after promote, a later copy lands in the watchlist group instead', async () => {
    const entry = await rejectedOriginal();
    await body(env.call('POST', `/api/knowledge/${entry.id}/promote-watchlist`));
    const later = await submitAgain('later.jpg');
    expect(similarityGroups(later)).toEqual(['watchlist', 'internal']);
    expect(later.groups[0]).toMatchObject({ key: 'watchlist', label: '확정 DB 근거' });
    expect(later.evidence.find((e: any) => e.group === 'watchlist')).toMatchObject({ knowledge_entry_id: entry.id, source: 'watchlist' });
    expect(later.submission).toMatchObject({ decision: null });
    expect(later.submission.risk.level).toBe('high');
  });

  it('after exclude, a later copy is neither in the attention nor in the watchlist group', async () => {
    const entry = await rejectedOriginal();
    await body(env.call('POST', `/api/knowledge/${entry.id}/exclude-watchlist`));
    const later = await submitAgain('later.jpg');
    // Still an internal look-alike of the earlier submission, but no longer a candidate match.
    expect(similarityGroups(later)).toEqual(['internal']);
    expect(later.evidence.some((e: any) => e.knowledge_entry_id === entry.id)).toBe(false);
    expect(later.submission.attention_match).toBe(false);
  });

  it('an approved photo creates no candidate: a later copy is only an internal look-alike', async () => {
    copyFixture('astronaut.png', env.paths.imagesDir, 'astronaut.png');
    await reload();
    await body(env.call('POST', '/api/submissions/astronaut/decision', { decision: '승인' }));
    const later = await submitAgain('later.jpg');
    expect(similarityGroups(later)).toEqual(['internal']);
    expect(later.submission.attention_match).toBe(false);
  });
});
