import type { Config } from '../config.js';
import { braveSearchSettings, createBraveSearchClient } from './brave-search.js';
import { createGlobalSearchClient, globalSearchSettings, type GlobalSearchClient } from './global-search.js';
import { createGlobalVisionClient, globalVisionSettings, type GlobalVisionClient } from './global-vision.js';
import { createLocalLlmClient, localLlmSettings, type LocalLlmClient } from './local-llm.js';
import { createRegionalClient, regionalSettings, type RegionalClient } from './regional.js';
import type { Egress } from '../ports.js';

export interface ProviderClients {
  regional: RegionalClient;
  globalVision: GlobalVisionClient;
  globalSearch: GlobalSearchClient;
  localLlm: LocalLlmClient;
}

/**
 * All four clients from one config; quota and the enabled switch are the caller's (lib/repo).
 * `GLOBAL_SEARCH_PROVIDER` picks the vendor behind the global search; both speak the same client.
 */
export function createProviderClients(config: Config, egress: Egress): ProviderClients {
  return {
    regional: createRegionalClient(regionalSettings(config), egress),
    globalVision: createGlobalVisionClient(globalVisionSettings(config), egress),
    globalSearch:
      config.GLOBAL_SEARCH_PROVIDER === 'brave'
        ? createBraveSearchClient(braveSearchSettings(config), egress)
        : createGlobalSearchClient(globalSearchSettings(config), egress),
    localLlm: createLocalLlmClient(localLlmSettings(config), egress),
  };
}
