import { beforeAll, describe, expect, it } from 'vitest';
import { buildConfig } from '../../lib/config.js';
import type { Evidence } from '../../lib/repo/evidence.js';
import { buildEvidencePrompt, createLocalLlmClient, localLlmSettings, type EvidencePrompt, type LocalLlmClient } from '../../lib/providers/local-llm.js';
import { FAKE_LLM_ANSWER, startFakeLocalLlm } from '../fakes/local-llm.js';
import { nodeEgress } from '../../lib/net/http-client.js';
import { useFakeProviders } from '../helpers/fake-world.js';

const fakes = useFakeProviders({ resetEach: true });
let client: LocalLlmClient;

/** The service's configuration pointed at the fakes. */
const configFor = (extra: Record<string, string> = {}) => buildConfig({ ...fakes.settings, LOCALLLM_MODEL: 'tiny-instruct', ...extra }).config;

function evidence(id: string, overrides: Partial<Evidence> = {}): Evidence {
  return {
    id,
    submission_id: 'sub_1',
    source: 'regional',
    kind: 'image_result',
    group: 'web_related',
    title: `Result ${id}`,
    text: `Snippet of ${id}`,
    url: `https://pages.example.org/${id}`,
    image_url: `https://img.example.org/${id}.jpg`,
    local_media_url: null,
    query: 'saturn v',
    similarity: 0.5,
    matched: false,
    match_transform: null,
    match_similarity: null,
    match_inliers: null,
    match_region: null,
    confidence: 0.5,
    status: null,
    counts_toward_score: true,
    supporting: false,
    face_crop: false,
    source_evidence_ids: [],
    source_urls: [],
    matched_submission_id: null,
    knowledge_entry_id: null,
    error: null,
    created_at: '2026-01-01T00:00:00.000Z',
    pages: [],
    page_count: 0,
    ...overrides,
  };
}

beforeAll(() => {
  client = createLocalLlmClient(localLlmSettings(configFor()), nodeEgress);
});

describe('evidence prompt', () => {
  it('carries only stored collected evidence: no failures and no earlier summaries', () => {
    const built = buildEvidencePrompt([
      evidence('ev_1', { title: 'Saturn V on the pad' }),
      evidence('ev_2', { source: 'global_vision', matched: true, similarity: 0.97 }),
      evidence('ev_3', { error: { code: 'timeout', message: 'no answer' } }),
      evidence('ev_4', { source: 'local_llm', supporting: true, title: 'an earlier summary' }),
    ]);
    expect(built.sourceEvidenceIds).toEqual(['ev_1', 'ev_2']);
    expect(built.prompt).toContain('Saturn V on the pad');
    expect(built.prompt).toContain('Snippet of ev_1');
    expect(built.prompt).toContain('"id":"ev_2"');
    expect(built.prompt).not.toContain('ev_3');
    expect(built.prompt).not.toContain('an earlier summary');
    expect(built.sourceUrls).toContain('https://pages.example.org/ev_1');
  });

  it('tells the model it must not decide, score, or name anyone without a source', () => {
    const { prompt } = buildEvidencePrompt([evidence('ev_1')]);
    expect(prompt).toMatch(/do not approve, hold or reject/i);
    expect(prompt).toMatch(/do not give a score/i);
    expect(prompt).toMatch(/do not name a person, celebrity, work/i);
  });
});

describe('language model request', () => {
  it('posts model, prompt and stream false to /api/generate with no key, and returns the whole answer', async () => {
    const { prompt } = buildEvidencePrompt([evidence('ev_1'), evidence('ev_2')]);
    const result = await client.generate(prompt);
    expect(result).toEqual({ ok: true, text: FAKE_LLM_ANSWER, model: 'tiny-instruct' });
    const [request] = fakes.llm.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/api/generate');
    expect(request.json).toEqual({ model: 'tiny-instruct', prompt, stream: false });
    expect(request.headers.authorization).toBeUndefined();
    expect(Object.keys(request.query)).toEqual([]);
  });

  it('fails with an empty answer rather than storing nothing as a summary', async () => {
    fakes.llm.answer = '   ';
    const result = await client.generate(buildEvidencePrompt([evidence('ev_1')]).prompt);
    expect(result).toMatchObject({ ok: false, error: { code: 'malformed_response' } });
  });

  it('fails when the server says the answer is not finished', async () => {
    fakes.llm.respondOnce({ json: { model: 'tiny-instruct', response: 'partial', done: false } });
    const result = await client.generate(buildEvidencePrompt([evidence('ev_1')]).prompt);
    expect(result).toMatchObject({ ok: false, error: { code: 'malformed_response' } });
  });

  it('reports an unknown model as an HTTP failure with the server reason', async () => {
    fakes.llm.respondOnce({ status: 404, json: { error: "model 'tiny-instruct' not found" } });
    const result = await client.generate(buildEvidencePrompt([evidence('ev_1')]).prompt);
    expect(result).toEqual({ ok: false, error: { code: 'http_error', message: expect.stringContaining('not found') } });
  });
});

describe('language model down or slow', () => {
  it('fails fast when the server is down, long before the read timeout', async () => {
    const down = await startFakeLocalLlm();
    const url = down.url;
    await down.close();
    const readTimeoutMs = 30_000;
    const offline = createLocalLlmClient(
      { ...localLlmSettings(configFor({ LOCALLLM_BASE_URL: url })), connectTimeoutMs: 1500, timeoutMs: readTimeoutMs },
      nodeEgress,
    );
    const started = Date.now();
    const result = await offline.generate(buildEvidencePrompt([evidence('ev_1')]).prompt);
    expect(result).toMatchObject({ ok: false, error: { code: 'unreachable' } });
    expect(Date.now() - started).toBeLessThan(readTimeoutMs / 2);
  });

  it('keeps waiting past the connect timeout while the model generates', async () => {
    fakes.llm.respondOnce({ delayMs: 600, json: { model: 'tiny-instruct', response: 'slow but complete', done: true } });
    const patient = createLocalLlmClient({ ...localLlmSettings(configFor()), connectTimeoutMs: 200, timeoutMs: 10_000 }, nodeEgress);
    const result = await patient.generate(buildEvidencePrompt([evidence('ev_1')]).prompt);
    expect(result).toEqual({ ok: true, text: 'slow but complete', model: 'tiny-instruct' });
  });

  it('gives a timeout failure when generation outlasts the read timeout', async () => {
    fakes.llm.respondOnce({ delayMs: 3000, json: { model: 'tiny-instruct', response: 'too late', done: true } });
    const impatient = createLocalLlmClient({ ...localLlmSettings(configFor()), connectTimeoutMs: 1500, timeoutMs: 300 }, nodeEgress);
    const result = await impatient.generate(buildEvidencePrompt([evidence('ev_1')]).prompt);
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
  });

  it('refuses an empty prompt without calling the server', async () => {
    const result = await client.generate('' as EvidencePrompt);
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(fakes.llm.requests).toHaveLength(0);
  });
});
