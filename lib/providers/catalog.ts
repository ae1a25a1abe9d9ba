import type { Config, ConfigKey } from '../config.js';

export const PROVIDER_IDS = ['regional', 'global_vision', 'global_search', 'local_llm'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export interface ProviderInfo {
  id: ProviderId;
  name: string;
  kind: 'search' | 'vision' | 'llm';
  /** Variables that must be set for the provider to be usable (names only). */
  requiredEnv: ConfigKey[];
  /** Variables it reads when present, required or not. */
  optionalEnv: ConfigKey[];
  dailyLimitKey: ConfigKey;
}

export const PROVIDERS: Record<ProviderId, ProviderInfo> = {
  regional: {
    id: 'regional',
    name: 'Regional web search',
    kind: 'search',
    requiredEnv: ['REGIONAL_CLIENT_ID', 'REGIONAL_CLIENT_SECRET'],
    optionalEnv: ['REGIONAL_API_URL'],
    dailyLimitKey: 'SVC_REGIONAL_DAILY_LIMIT',
  },
  global_vision: {
    id: 'global_vision',
    name: 'Global web detection (vision)',
    kind: 'vision',
    requiredEnv: ['GLOBAL_VISION_API_KEY'],
    optionalEnv: ['GLOBAL_VISION_URL', 'GLOBAL_VISION_PARENT'],
    dailyLimitKey: 'SVC_GLOBAL_DAILY_LIMIT',
  },
  global_search: {
    id: 'global_search',
    name: 'Global custom search',
    kind: 'search',
    requiredEnv: ['GLOBAL_CUSTOM_SEARCH_API_KEY', 'GLOBAL_CUSTOM_SEARCH_CX'],
    optionalEnv: ['GLOBAL_CUSTOM_SEARCH_URL'],
    dailyLimitKey: 'SVC_GLOBAL_CUSTOM_SEARCH_DAILY_LIMIT',
  },
  local_llm: {
    id: 'local_llm',
    name: 'Local language model',
    kind: 'llm',
    requiredEnv: ['LOCALLLM_BASE_URL', 'LOCALLLM_MODEL'],
    optionalEnv: [],
    dailyLimitKey: 'SVC_LLM_DAILY_LIMIT',
  },
};

export const isProviderId = (id: string): id is ProviderId => (PROVIDER_IDS as readonly string[]).includes(id);

export function missingEnv(config: Config, id: ProviderId): ConfigKey[] {
  return PROVIDERS[id].requiredEnv.filter((name) => String(config[name]).trim() === '');
}

/** Names of the provider's variables that have a value: names only, never the values. */
export function configuredEnv(config: Config, id: ProviderId): ConfigKey[] {
  const info = PROVIDERS[id];
  return [...info.requiredEnv, ...info.optionalEnv].filter((name) => String(config[name]).trim() !== '');
}
