import type { Config, ConfigKey, GlobalSearchVendor } from '../config.js';

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
  /** Which vendor serves the role, for a role that has a choice (`global_search`); null otherwise. */
  vendor: GlobalSearchVendor | null;
}

const PROVIDERS: Record<ProviderId, ProviderInfo> = {
  regional: {
    id: 'regional',
    name: 'Regional web search',
    kind: 'search',
    requiredEnv: ['REGIONAL_CLIENT_ID', 'REGIONAL_CLIENT_SECRET'],
    optionalEnv: ['REGIONAL_API_URL'],
    dailyLimitKey: 'SVC_REGIONAL_DAILY_LIMIT',
    vendor: null,
  },
  global_vision: {
    id: 'global_vision',
    name: 'Global web detection (vision)',
    kind: 'vision',
    requiredEnv: ['GLOBAL_VISION_API_KEY'],
    optionalEnv: ['GLOBAL_VISION_URL', 'GLOBAL_VISION_PARENT'],
    dailyLimitKey: 'SVC_GLOBAL_DAILY_LIMIT',
    vendor: null,
  },
  global_search: {
    id: 'global_search',
    name: 'Global custom search',
    kind: 'search',
    requiredEnv: ['GLOBAL_CUSTOM_SEARCH_API_KEY', 'GLOBAL_CUSTOM_SEARCH_CX'],
    optionalEnv: ['GLOBAL_SEARCH_PROVIDER', 'GLOBAL_CUSTOM_SEARCH_URL'],
    dailyLimitKey: 'SVC_GLOBAL_CUSTOM_SEARCH_DAILY_LIMIT',
    vendor: 'custom_search',
  },
  local_llm: {
    id: 'local_llm',
    name: 'Local language model',
    kind: 'llm',
    requiredEnv: ['LOCALLLM_BASE_URL', 'LOCALLLM_MODEL'],
    optionalEnv: [],
    dailyLimitKey: 'SVC_LLM_DAILY_LIMIT',
    vendor: null,
  },
};

/**
 * The second vendor of the `global_search` role: the same role in quotas, switches and evidence,
 * with its own key and daily limit (docs/decisions/0030-second-global-search.md).
 */
const BRAVE_SEARCH: ProviderInfo = {
  id: 'global_search',
  name: 'Global search (Brave)',
  kind: 'search',
  requiredEnv: ['BRAVE_SEARCH_API_KEY'],
  optionalEnv: ['GLOBAL_SEARCH_PROVIDER', 'BRAVE_SEARCH_URL'],
  dailyLimitKey: 'SVC_BRAVE_SEARCH_DAILY_LIMIT',
  vendor: 'brave',
};

export const isProviderId = (id: string): id is ProviderId => (PROVIDER_IDS as readonly string[]).includes(id);

/** The provider as this configuration has it: `GLOBAL_SEARCH_PROVIDER` picks who serves `global_search`. */
export function providerInfo(config: Config, id: ProviderId): ProviderInfo {
  return id === 'global_search' && config.GLOBAL_SEARCH_PROVIDER === 'brave' ? BRAVE_SEARCH : PROVIDERS[id];
}

export function missingEnv(config: Config, id: ProviderId): ConfigKey[] {
  return providerInfo(config, id).requiredEnv.filter((name) => String(config[name]).trim() === '');
}

/** Names of the provider's variables that have a value: names only, never the values. */
export function configuredEnv(config: Config, id: ProviderId): ConfigKey[] {
  const info = providerInfo(config, id);
  return [...info.requiredEnv, ...info.optionalEnv].filter((name) => String(config[name]).trim() !== '');
}
