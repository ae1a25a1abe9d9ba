import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { buildConfig, type LoadedConfig } from './config.js';

/** The Node service's configuration: `.env` from the working directory when present, the process environment on top. */
export function loadConfig(processEnv: Record<string, string | undefined> = process.env, dotEnvPath = '.env'): LoadedConfig {
  let text: string | undefined;
  if (existsSync(dotEnvPath)) {
    try {
      text = readFileSync(dotEnvPath, 'utf8');
    } catch {
      text = undefined;
    }
  }
  return buildConfig(processEnv, text, { cores: availableParallelism() });
}
