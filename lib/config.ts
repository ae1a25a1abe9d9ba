import { z } from 'zod';

/**
 * Every setting of SPEC.md section 8 and CONTRACT.md section 5,
 * each with its default and range. A malformed value falls back to its default and an out-of-range
 * number is clamped, so start-up never fails on configuration; `warnings` says what was corrected.
 */

type Source = Record<string, string | undefined>;

interface IntRule {
  kind: 'int';
  def: number;
  min?: number;
  max?: number;
}
interface FloatRule {
  kind: 'float';
  def: number;
  min?: number;
  max?: number;
}
interface BoolRule {
  kind: 'bool';
  def: boolean;
}
interface StrRule {
  kind: 'str';
  def: string;
  check?: (v: string) => boolean;
}
type Rule = IntRule | FloatRule | BoolRule | StrRule;

const int = (def: number, min?: number, max?: number): IntRule => ({ kind: 'int', def, min, max });
const float = (def: number, min?: number, max?: number): FloatRule => ({ kind: 'float', def, min, max });
const bool = (def: boolean): BoolRule => ({ kind: 'bool', def });
const str = (def: string, check?: (v: string) => boolean): StrRule => ({ kind: 'str', def, check });

const isHttpUrl = (v: string) => {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};
const isTimeZone = (v: string) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: v });
    return true;
  } catch {
    return false;
  }
};
const isSort = (v: string) => v === 'sim' || v === 'date';

/** The vendors that can serve the `global_search` role (docs/decisions/0030-second-global-search.md). */
export const GLOBAL_SEARCH_VENDORS = ['custom_search', 'brave'] as const;
export type GlobalSearchVendor = (typeof GLOBAL_SEARCH_VENDORS)[number];
const isGlobalSearchVendor = (v: string): v is GlobalSearchVendor => (GLOBAL_SEARCH_VENDORS as readonly string[]).includes(v);

/** Secret variables: their values never leave the config object except toward their provider. */
export const SECRET_VARIABLES = [
  'REGIONAL_CLIENT_ID',
  'REGIONAL_CLIENT_SECRET',
  'GLOBAL_VISION_API_KEY',
  'GLOBAL_CUSTOM_SEARCH_API_KEY',
  'GLOBAL_CUSTOM_SEARCH_CX',
  'BRAVE_SEARCH_API_KEY',
  'SVC_ADMIN_TOKEN',
  // A webhook address often carries its own key in the path, so it is kept like one.
  'SVC_ALERT_WEBHOOK_URL',
  'SVC_ALERT_WEBHOOK_SECRET',
] as const;

export const RULES = {
  SVC_HOST: str('127.0.0.1'),
  SVC_PORT: int(9500, 0, 65535),
  // The image service (image-service.ts) that a Worker reaches for everything that decodes pixels.
  SVC_IMAGE_SERVICE_PORT: int(9501, 0, 65535),
  SVC_DATA_DIR: str('data'),
  SVC_TIMEZONE: str('Asia/Seoul', isTimeZone),
  SVC_MAX_BODY_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024),
  SVC_MAX_IMAGE_PIXELS: int(50_000_000, 1, 1_000_000_000),
  // The pictures' keypoints kept in the data folder for the geometric check (decision 0047), about
  // 150 KB a picture; 0 keeps them in each process's memory only.
  SVC_KEYPOINTS_MAX_MB: int(1024, 0, 1_000_000),
  SVC_ENRICH_CONCURRENCY: int(2, 1, 16),
  // Analysis is CPU work, done mostly on worker threads and libvips' pool while its job waits:
  // by default four jobs per core keep the cores busy (see buildConfig, which knows the machine;
  // two per core left a quarter of them idle, README "Ingest end to end").
  SVC_ANALYSIS_CONCURRENCY: int(4, 1, 16),
  // Processes answering requests on the Node service's port (server.ts); the jobs run in one more.
  // One per core by default (see buildConfig): one event loop queued 8 reviewers' requests.
  SVC_HTTP_PROCESSES: int(1, 1, 16),
  SVC_EVIDENCE_RETENTION_DAYS: int(90, 1, 36500),
  // Where backups go (npm run backup, POST /api/admin/backup, the daily one); empty: <SVC_DATA_DIR>/backups.
  SVC_BACKUP_DIR: str(''),
  SVC_BACKUP_DAILY: bool(false),
  SVC_BACKUP_KEEP: int(7, 1, 365),
  SVC_PROVIDER_TIMEOUT_MS: int(15000, 1000, 120000),
  SVC_DOWNLOAD_MAX_BYTES: int(10 * 1024 * 1024, 1024, 512 * 1024 * 1024),
  SVC_DOWNLOAD_TIMEOUT_MS: int(10000, 100, 120000),
  SVC_ALLOW_PRIVATE_DOWNLOADS: bool(false),
  SVC_GLOBAL_FACE_CROP_SEARCH: bool(false),

  SVC_AUTO_REGIONAL_QUERY_LIMIT: int(3, 0, 10),
  SVC_AUTO_REGIONAL_BLOG_QUERY_LIMIT: int(1, 0, 10),
  SVC_AUTO_REGIONAL_WEB_QUERY_LIMIT: int(1, 0, 10),
  SVC_AUTO_GLOBAL_CUSTOM_QUERY_LIMIT: int(2, 0, 10),
  SVC_SEARCH_RESULT_COMPARE_LIMIT: int(3, 0, 20),
  SVC_SEARCH_RESULT_PAGE_IMAGE_LIMIT: int(3, 0, 10),
  SVC_SEARCH_RESULT_SIMILARITY_THRESHOLD: float(0.9, 0, 1),

  REGIONAL_API_URL: str('https://openapi.regional.example', isHttpUrl),
  REGIONAL_CLIENT_ID: str(''),
  REGIONAL_CLIENT_SECRET: str(''),
  REGIONAL_SEARCH_DISPLAY: int(10, 1, 100),
  REGIONAL_SEARCH_PAGES: int(1, 1, 10),
  REGIONAL_SEARCH_SORT: str('sim', isSort),
  REGIONAL_BLOG_SEARCH_DISPLAY: int(3, 1, 100),
  REGIONAL_BLOG_SEARCH_PAGES: int(1, 1, 10),
  REGIONAL_BLOG_SEARCH_SORT: str('sim', isSort),
  REGIONAL_WEB_SEARCH_DISPLAY: int(3, 1, 100),
  REGIONAL_WEB_SEARCH_PAGES: int(1, 1, 10),

  GLOBAL_VISION_URL: str('https://vision.global.example', isHttpUrl),
  GLOBAL_VISION_API_KEY: str(''),
  GLOBAL_VISION_PARENT: str(''),

  GLOBAL_CUSTOM_SEARCH_URL: str('https://customsearch.global.example/customsearch/v1', isHttpUrl),
  GLOBAL_CUSTOM_SEARCH_API_KEY: str(''),
  GLOBAL_CUSTOM_SEARCH_CX: str(''),
  GLOBAL_CUSTOM_SEARCH_IMAGE_RESULTS: int(3, 1, 10),
  GLOBAL_CUSTOM_SEARCH_IMAGE_PAGES: int(1, 1, 10),
  GLOBAL_CUSTOM_SEARCH_WEB_RESULTS: int(3, 1, 10),
  GLOBAL_CUSTOM_SEARCH_WEB_PAGES: int(1, 1, 10),

  // Which vendor serves `global_search`; the result counts and pages above apply to either.
  GLOBAL_SEARCH_PROVIDER: str('custom_search', isGlobalSearchVendor),
  BRAVE_SEARCH_URL: str('https://api.search.brave.com', isHttpUrl),
  BRAVE_SEARCH_API_KEY: str(''),

  LOCALLLM_BASE_URL: str('http://127.0.0.1:11434', isHttpUrl),
  LOCALLLM_MODEL: str('qwen2.5:3b-instruct'),
  LOCALLLM_CONNECT_TIMEOUT_MS: int(1500, 100, 60000),
  LOCALLLM_TIMEOUT_MS: int(120000, 1000, 600000),

  // Accounts and alerts (CONTRACT.md section 5).
  SVC_ADMIN_TOKEN: str(''),
  SVC_SESSION_HOURS: int(12, 1, 24 * 30),
  // Requests per caller (docs/decisions/0028-rate-limits.md): a console page load with 100 thumbnails
  // sends about 130 at once, so the burst lets a reviewer load two pages back to back; 0 switches a limit off.
  SVC_RATE_LIMIT_PER_SECOND: int(30, 0, 100_000),
  SVC_RATE_LIMIT_BURST: int(300, 1, 1_000_000),
  SVC_RATE_LIMIT_ANONYMOUS_PER_SECOND: int(5, 0, 100_000),
  SVC_RATE_LIMIT_ANONYMOUS_BURST: int(30, 1, 1_000_000),
  SVC_ALERT_WEBHOOK_URL: str('', (v) => isHttpUrl(v)),
  SVC_ALERT_WEBHOOK_SECRET: str(''),

  SVC_REGIONAL_DAILY_LIMIT: int(25000, 0),
  SVC_GLOBAL_DAILY_LIMIT: int(1000, 0),
  SVC_GLOBAL_CUSTOM_SEARCH_DAILY_LIMIT: int(100, 0),
  SVC_BRAVE_SEARCH_DAILY_LIMIT: int(100, 0),
  SVC_LLM_DAILY_LIMIT: int(1000, 0),
} satisfies Record<string, Rule>;

type Rules = typeof RULES;
export type ConfigKey = keyof Rules;
export type Config = {
  readonly [K in ConfigKey]: Rules[K] extends BoolRule ? boolean : Rules[K] extends StrRule ? string : number;
};

export interface LoadedConfig {
  config: Config;
  /** Corrections made while reading (variable names and why); values are never included. */
  warnings: string[];
}

const numberText = z
  .string()
  .trim()
  .regex(/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/);
const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

function clamp(n: number, min = -Infinity, max = Infinity) {
  return Math.min(max, Math.max(min, n));
}

function readOne(name: string, rule: Rule, raw: string | undefined, warnings: string[]): unknown {
  if (raw === undefined || raw.trim() === '') return rule.def;
  const text = raw.trim();
  switch (rule.kind) {
    case 'bool': {
      const lower = text.toLowerCase();
      if (TRUE.has(lower)) return true;
      if (FALSE.has(lower)) return false;
      warnings.push(`${name}: not a boolean, using the default`);
      return rule.def;
    }
    case 'int':
    case 'float': {
      if (!numberText.safeParse(text).success) {
        warnings.push(`${name}: not a number, using the default`);
        return rule.def;
      }
      let n = Number(text);
      if (!Number.isFinite(n)) {
        warnings.push(`${name}: not a finite number, using the default`);
        return rule.def;
      }
      if (rule.kind === 'int') n = Math.round(n);
      const clamped = clamp(n, rule.min, rule.max);
      if (clamped !== n) warnings.push(`${name}: out of range, clamped`);
      return clamped;
    }
    case 'str': {
      if (rule.check && !rule.check(text)) {
        warnings.push(`${name}: invalid value, using the default`);
        return rule.def;
      }
      return text;
    }
  }
}

/** Parses a .env file: KEY=VALUE lines, `#` comments, optional `export`, single or double quotes. */
export function parseDotEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\s*$/.exec(line);
    if (!m) continue;
    let value = m[2];
    const quoted = /^(['"])(.*)\1$/.exec(value);
    if (quoted) value = quoted[2];
    else value = value.replace(/\s+#.*$/, '');
    out[m[1]] = value;
  }
  return out;
}

/**
 * Builds the config from a `.env` text (optional) with the process environment (or a Worker's
 * bindings) on top. `cores` is the machine's, for the defaults that follow it.
 */
export function buildConfig(processEnv: Source, dotEnvText?: string, machine: { cores: number } = { cores: 1 }): LoadedConfig {
  const fromFile = dotEnvText ? parseDotEnv(dotEnvText) : {};
  const warnings: string[] = [];
  const config: Record<string, unknown> = {};
  const rules: Record<string, Rule> = {
    ...RULES,
    SVC_ANALYSIS_CONCURRENCY: int(Math.min(16, 4 * Math.max(1, machine.cores)), 1, 16),
    SVC_HTTP_PROCESSES: int(Math.min(16, Math.max(1, machine.cores)), 1, 16),
  };
  for (const [name, rule] of Object.entries(rules)) {
    const raw = processEnv[name] ?? fromFile[name];
    config[name] = readOne(name, rule, raw, warnings);
  }
  return { config: Object.freeze(config) as Config, warnings };
}

/** An operator may put a user and password in a provider URL; they are never shown. */
function withoutCredentials(url: string): string {
  const u = new URL(url);
  if (!u.username && !u.password) return url;
  u.username = '';
  u.password = '';
  return u.toString();
}

/** Settings that are safe to show (the console's `limits`): no secret values. */
export function publicSettings(config: Config): Record<string, string | number | boolean> {
  const secret = new Set<string>(SECRET_VARIABLES);
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(config)) {
    if (secret.has(k)) continue;
    out[k] = typeof v === 'string' && isHttpUrl(v) ? withoutCredentials(v) : v;
  }
  return out;
}
