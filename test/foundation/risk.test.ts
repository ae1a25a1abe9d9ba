import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addEvidence, type Evidence, type NewEvidence } from '../../lib/repo/evidence.js';
import { getSubmission, upsertSubmissionStatement } from '../../lib/repo/submissions.js';
import { recomputeRisk } from '../../lib/review/risk.js';
import { createTestEnv, type TestEnv } from '../helpers/env.js';

let env: TestEnv;
const NOW = '2026-11-21T03:00:00.000Z';

beforeEach(async () => {
  env = await createTestEnv();
  await upsertSubmissionStatement(
    env.db,
    {
      id: 's1',
      title: 't',
      file: 'images/s1.jpg',
      origin: 'quick',
      submitted_at: '2026-11-21 12:00',
      submitted_at_epoch: 0,
      width: 1,
      height: 1,
      format: 'jpeg',
      bytes: 1,
      sha256: 'x',
    },
    NOW,
  ).run();
});
afterEach(async () => env.dispose());

/** The risk stored after adding the evidence, as the stored submission shows it. */
async function risk(items: NewEvidence[] = []) {
  await addEvidence(env.db, 's1', items, NOW);
  const recomputed = await recomputeRisk(env.db, 's1', NOW);
  const stored = (await getSubmission(env.db, 's1'))!.risk;
  expect(recomputed).toEqual(stored);
  return stored;
}

/** Who the picture shows, as its analysis stores it. */
async function shows(faces: unknown[], people: unknown[]) {
  await env.db.prepare(`UPDATE submissions SET faces = ?, people = ? WHERE id = 's1'`).bind(JSON.stringify(faces), JSON.stringify(people)).run();
}
const FACE = { box: { x: 1, y: 1, width: 30, height: 30 }, score: 0.9 };
const person = (face: number | null) => ({ box: { x: 0, y: 0, width: 60, height: 120 }, score: 0.8, face });

describe('the risk score', () => {
  it('is 0 and low with no evidence', async () => {
    expect(await risk([])).toEqual({ score: 0, level: 'low', signals: [] });
  });

  it('adds one fixed weight per kind of counting evidence', async () => {
    const r = await risk([
      { source: 'global_vision', kind: 'full_matching_image', group: 'web_match', matched: true, similarity: 0.97 },
      { source: 'regional', kind: 'image_result', group: 'web_match', matched: true, similarity: 0.95 },
      { source: 'global_vision', kind: 'web_entity', group: 'web_related', title: 'x' },
    ]);
    expect(r.score).toBe(55);
    expect(r.level).toBe('medium');
    expect(r.signals.map((s) => [s.code, s.weight, s.evidence_ids.length])).toEqual([
      ['web_match', 45, 2],
      ['web_related', 10, 1],
    ]);
  });

  it('makes an attention or watchlist match high whatever the score', async () => {
    const r = await risk([{ source: 'watchlist', kind: 'attention_candidate', group: 'attention', matched: true, similarity: 0.95 }]);
    expect(r).toMatchObject({ score: 60, level: 'high' });
    expect((await risk([{ source: 'watchlist', kind: 'watchlist_entry', group: 'watchlist', matched: true }])).score).toBe(100);
  });

  it('counts nothing from summaries, failures or face crops', async () => {
    const r = await risk([
      { source: 'local_llm', kind: 'summary', group: 'supporting', supporting: true, text: 'x' },
      { source: 'local_llm', kind: 'summary_failed', group: 'failures', error: { code: 'unreachable', message: 'down' } },
      { source: 'global_vision', kind: 'page_with_matching_image', group: 'web_related', face_crop: true },
    ]);
    expect(r).toEqual({ score: 0, level: 'low', signals: [] });
  });

  it('adds a signal for faces, and a smaller one for people whose face was not found, with no evidence behind them', async () => {
    await shows([FACE, FACE], [person(0)]);
    expect(await risk()).toEqual({
      score: 10,
      level: 'low',
      signals: [{ code: 'faces', label: '얼굴 포함 (초상권)', weight: 10, evidence_ids: [] }],
    });
    await shows([], [person(null)]);
    expect(await risk()).toMatchObject({ score: 5, signals: [{ code: 'people', weight: 5 }] });
    await shows([FACE], [person(0), person(null)]);
    expect(await risk([{ source: 'internal', kind: 'submission_match', group: 'internal', matched: true }])).toMatchObject({
      score: 40,
      level: 'medium',
      signals: [{ code: 'internal_match' }, { code: 'faces' }, { code: 'people' }],
    });
  });

  it("lists each signal's evidence in the order the review shows it, and caps the score at 100", async () => {
    const r = await risk([
      { source: 'regional', kind: 'image_result', group: 'web_match', matched: true, similarity: 0.91, url: 'u1' },
      { source: 'regional', kind: 'image_result', group: 'web_match', matched: true, similarity: 0.99, url: 'u2' },
      { source: 'regional', kind: 'image_result', group: 'web_match', matched: false, similarity: 0.5, url: 'u3' },
      { source: 'watchlist', kind: 'watchlist_entry', group: 'watchlist', matched: true },
      { source: 'file_metadata', kind: 'rights_metadata', group: 'rights', text: 'x' },
    ]);
    const review = await (await env.call('GET', '/api/submissions/s1/review')).json();
    const shown = (url: string) => review.evidence.find((e: Evidence) => e.url === url).id;
    expect(r.score).toBe(100);
    expect(r.signals.map((s) => s.code)).toEqual(['watchlist_match', 'web_match']);
    expect(r.signals[1].evidence_ids).toEqual([shown('u2'), shown('u1')]);
  });

  it('takes no signal from an analysis whose boxes cannot be read', async () => {
    await env.db.prepare(`UPDATE submissions SET faces = 'not json', people = '{"face": null}' WHERE id = 's1'`).run();
    expect(await risk()).toEqual({ score: 0, level: 'low', signals: [] });
  });

  it('drops evidence marked 무관, 오탐 or 보류 and keeps 판단에 사용', async () => {
    const [a, b] = await addEvidence(
      env.db,
      's1',
      [
        { source: 'internal', kind: 'submission_match', group: 'internal', matched: true },
        { source: 'regional', kind: 'image_result', group: 'web_match', matched: true },
      ],
      NOW,
    );
    await env.db.prepare("UPDATE evidence SET status = '오탐' WHERE id = ?").bind(b.id).run();
    await env.db.prepare("UPDATE evidence SET status = '판단에 사용' WHERE id = ?").bind(a.id).run();
    expect(await risk()).toMatchObject({
      score: 25,
      signals: [{ code: 'internal_match', evidence_ids: [a.id] }],
    });
  });

  it('stores the risk of the latest evidence when marks and new evidence race', async () => {
    const items = await addEvidence(
      env.db,
      's1',
      Array.from(
        { length: 6 },
        (_, i): NewEvidence => ({ source: 'regional', kind: 'image_result', group: i % 2 ? 'web_match' : 'web_related', matched: i % 2 === 1, url: `u${i}` }),
      ),
      NOW,
    );
    const statuses = ['오탐', '판단에 사용', '무관', '보류'] as const;
    await Promise.all([
      ...items.map((e: Evidence, i) => env.call('POST', `/api/evidence/${e.id}/status`, { status: statuses[i % 4] })),
      addEvidence(env.db, 's1', [{ source: 'watchlist', kind: 'watchlist_entry', group: 'watchlist', matched: true }], NOW).then(() =>
        recomputeRisk(env.db, 's1', NOW),
      ),
      recomputeRisk(env.db, 's1', NOW),
    ]);
    const stored = (await getSubmission(env.db, 's1'))!.risk;
    expect(stored).toEqual(await recomputeRisk(env.db, 's1', NOW));
    expect(stored.level).toBe('high');
  });
});
