import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The node arguments a checkout's npm script (`start`, `image-service` for the Worker's image
 * service, or `backup`) runs its entry with, from that checkout's package.json: its node flags (the
 * heap's starting size, decisions/0067), `--import tsx` and the entry. Tests and benchmarks spawn
 * them with node itself, as npm runs them, so that a signal reaches the process doing the work: the
 * tsx command starts a node process of its own, which a SIGKILL of tsx leaves running. A build whose
 * script was `tsx <entry>` had no flags.
 */
export function scriptArgs(dir: string, script: 'start' | 'image-service' | 'backup'): string[] {
  const command: unknown = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).scripts?.[script];
  if (typeof command !== 'string') throw new Error(`${dir}/package.json has no ${script} script`);
  const [runner, ...args] = command.trim().split(/\s+/);
  if (runner === 'tsx') return ['--import', 'tsx', ...args];
  if (runner === 'node') return args;
  throw new Error(`the ${script} script of ${dir} runs neither node nor tsx: ${command}`);
}
