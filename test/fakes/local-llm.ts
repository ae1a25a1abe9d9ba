import { startFakeServer, type FakeServer } from './server.js';

/** The local language-model server: POST /api/generate {model, prompt, stream: false}, no key. */

export interface FakeLocalLlm extends FakeServer {
  /** The whole answer to every prompt; a function sees the prompt. */
  answer: string | ((prompt: string) => string);
  /** Every prompt received, oldest first. */
  prompts(): string[];
}

export const FAKE_LLM_ANSWER = '두 근거 [ev_1] [ev_2]가 같은 이미지를 가리킵니다.';

export async function startFakeLocalLlm(): Promise<FakeLocalLlm> {
  // Assigned before the first request can arrive; the default answer reads the test's current setting.
  let fake: FakeLocalLlm | undefined;

  const server = await startFakeServer((request) => {
    if (request.method !== 'POST' || request.path !== '/api/generate') return { status: 404, body: '404 page not found' };
    const body = request.json as { model?: unknown; prompt?: unknown; stream?: unknown } | undefined;
    if (!body || typeof body.model !== 'string' || body.model === '') return { status: 400, json: { error: 'model is required' } };
    if (typeof body.prompt !== 'string') return { status: 400, json: { error: 'prompt is required' } };
    const scripted = fake?.answer ?? FAKE_LLM_ANSWER;
    return {
      json: {
        model: body.model,
        created_at: new Date(0).toISOString(),
        response: typeof scripted === 'function' ? scripted(body.prompt) : scripted,
        done: true,
        done_reason: 'stop',
        total_duration: 1_000_000,
        eval_count: 12,
      },
    };
  });

  fake = Object.assign(server, {
    answer: FAKE_LLM_ANSWER as FakeLocalLlm['answer'],
    prompts: () =>
      server.requests.map((r) => (r.json as { prompt?: unknown } | undefined)?.prompt).filter((prompt): prompt is string => typeof prompt === 'string'),
  });
  return fake;
}
