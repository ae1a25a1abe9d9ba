import type { Config } from '../config.js';
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

/** All four clients from one config; quota and the enabled switch are the caller's (lib/repo). */
export function createProviderClients(config: Config, egress: Egress): ProviderClients {
  return {
    regional: createRegionalClient(regionalSettings(config), egress),
    globalVision: createGlobalVisionClient(globalVisionSettings(config), egress),
    globalSearch: createGlobalSearchClient(globalSearchSettings(config), egress),
    localLlm: createLocalLlmClient(localLlmSettings(config), egress),
  };
}
