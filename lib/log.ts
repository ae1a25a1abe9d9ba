import type { Config } from './config.js';
import { SECRET_VARIABLES } from './config.js';
import type { Logger } from './ports.js';

/** Removes every configured secret value from a text, wherever it appears. */
export function redactor(config: Config): (text: string) => string {
  const secrets = SECRET_VARIABLES.map((k) => config[k]).filter((v) => v.length >= 4);
  return (text) => secrets.reduce((t, s) => t.split(s).join('[redacted]'), text);
}

type Level = 'info' | 'warn' | 'error';

/** A Node process's streams: info on stdout, the rest on stderr. */
const processStreams = (level: Level, line: string) => (level === 'info' ? process.stdout : process.stderr).write(`${line}\n`);

/**
 * JSON lines with secrets scrubbed, on the process's streams (a Worker passes the console);
 * `silent` for tests that want quiet output.
 */
export function createLogger(config: Config, options: { silent?: boolean; sink?: (level: Level, line: string) => void } = {}): Logger {
  const redact = redactor(config);
  const sink = options.sink ?? processStreams;
  const write = (level: Level, message: string, fields?: Record<string, unknown>) => {
    if (options.silent) return;
    sink(level, redact(JSON.stringify({ at: new Date().toISOString(), level, message, ...fields })));
  };
  return {
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}
