import { afterAll, beforeAll, beforeEach } from 'vitest';
import {
  FAKE_LLM_ANSWER,
  fakeProviderSettings,
  startFakeBraveSearch,
  startFakeGlobalSearch,
  startFakeLocalLlm,
  startFakeRegional,
  startFakeVision,
  startFakeWeb,
  type FakeBraveSearch,
  type FakeGlobalSearch,
  type FakeLocalLlm,
  type FakeRegional,
  type FakeVision,
  type FakeWeb,
  type RecordedRequest,
} from '../fakes/index.js';

/**
 * The fake-provider world every test that reaches a provider runs against: the regional search, the
 * vision service, the global search (both vendors), the local language model and "the web", each a real HTTP server
 * on 127.0.0.1 that records what it receives. A test scripts them through the returned fakes
 * (results, detection, answer, web routes, respondWith / respondOnce for failures).
 */
export interface FakeProviders {
  regional: FakeRegional;
  vision: FakeVision;
  search: FakeGlobalSearch;
  /** The global search's second vendor; `settings` name the custom search, add `fakeBraveSettings(brave)` to use it. */
  brave: FakeBraveSearch;
  llm: FakeLocalLlm;
  web: FakeWeb;
  /**
   * The service's settings pointed at the fakes, as environment variable text: their addresses and
   * the keys they accept, and downloads from 127.0.0.1 allowed, where the fake web lives.
   */
  settings: Record<string, string>;
  /** Every request the six fakes received, in order of arrival. */
  requests(): RecordedRequest[];
  /**
   * Back to a world that finds nothing: scripted answers and recorded requests dropped, results and
   * detection empty, the default language-model answer. The web's pages stay.
   */
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeProviders(): Promise<FakeProviders> {
  const [regional, vision, search, brave, llm, web] = await Promise.all([
    startFakeRegional(),
    startFakeVision(),
    startFakeGlobalSearch(),
    startFakeBraveSearch(),
    startFakeLocalLlm(),
    startFakeWeb(),
  ]);
  const all = [regional, vision, search, brave, llm, web];
  return {
    regional,
    vision,
    search,
    brave,
    llm,
    web,
    settings: { ...fakeProviderSettings({ regional, vision, search, llm }), SVC_ALLOW_PRIVATE_DOWNLOADS: 'true' },
    requests: () => all.flatMap((fake) => fake.requests).sort((a, b) => a.sequence - b.sequence),
    reset() {
      for (const fake of all) fake.reset();
      regional.results.image = [];
      regional.results.blog = [];
      regional.results.webkr = [];
      search.results.image = [];
      search.results.web = [];
      brave.results.image = [];
      brave.results.web = [];
      vision.detection = {};
      llm.answer = FAKE_LLM_ANSWER;
    },
    close: async () => {
      await Promise.all(all.map((fake) => fake.close()));
    },
  };
}

/**
 * The world of a test file or describe block: started before its first test and closed after its
 * last. The returned object is filled in when the world starts, so read its fakes inside hooks and
 * tests. With `resetEach`, each test starts from `reset()`.
 */
export function useFakeProviders(options: { resetEach?: boolean } = {}): FakeProviders {
  const world = {} as FakeProviders;
  beforeAll(async () => {
    Object.assign(world, await startFakeProviders());
  });
  afterAll(async () => {
    await world.close?.();
  });
  if (options.resetEach) beforeEach(() => world.reset());
  return world;
}
