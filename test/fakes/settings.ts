import { FAKE_BRAVE_SEARCH_API_KEY, type FakeBraveSearch } from './brave-search.js';
import { FAKE_GLOBAL_SEARCH_API_KEY, FAKE_GLOBAL_SEARCH_CX, type FakeGlobalSearch } from './global-search.js';
import type { FakeLocalLlm } from './local-llm.js';
import { FAKE_REGIONAL_CLIENT_ID, FAKE_REGIONAL_CLIENT_SECRET, type FakeRegional } from './regional.js';
import { FAKE_VISION_API_KEY, type FakeVision } from './vision.js';

/** The service's provider settings pointed at the four fakes, with the keys they accept. */
export function fakeProviderSettings(fakes: {
  regional: FakeRegional;
  vision: FakeVision;
  search: FakeGlobalSearch;
  llm: FakeLocalLlm;
}): Record<string, string> {
  return {
    REGIONAL_API_URL: fakes.regional.url,
    REGIONAL_CLIENT_ID: FAKE_REGIONAL_CLIENT_ID,
    REGIONAL_CLIENT_SECRET: FAKE_REGIONAL_CLIENT_SECRET,
    GLOBAL_VISION_URL: fakes.vision.url,
    GLOBAL_VISION_API_KEY: FAKE_VISION_API_KEY,
    GLOBAL_CUSTOM_SEARCH_URL: fakes.search.endpoint,
    GLOBAL_CUSTOM_SEARCH_API_KEY: FAKE_GLOBAL_SEARCH_API_KEY,
    GLOBAL_CUSTOM_SEARCH_CX: FAKE_GLOBAL_SEARCH_CX,
    LOCALLLM_BASE_URL: fakes.llm.url,
  };
}

/** The global search served by the Brave fake instead (GLOBAL_SEARCH_PROVIDER=brave), with the key it accepts. */
export function fakeBraveSettings(brave: FakeBraveSearch): Record<string, string> {
  return { GLOBAL_SEARCH_PROVIDER: 'brave', BRAVE_SEARCH_URL: brave.url, BRAVE_SEARCH_API_KEY: FAKE_BRAVE_SEARCH_API_KEY };
}
