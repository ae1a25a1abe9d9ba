/**
 * The service as its own process, as `npm start` runs it, seen from a benchmark: where it listens,
 * which processes it is made of, and what the loop monitor (bench/loop-monitor.mjs) measured in each.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The address the service logs once it listens (its info lines are JSON on stdout). */
export function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen: string | null = '';
    child.stdout!.setEncoding('utf8');
    // Read to the end either way: a full pipe would stop the service.
    child.stdout!.on('data', (chunk: string) => {
      if (seen === null) return;
      seen += chunk;
      const url = /"message":"listening","url":"([^"]+)"/.exec(seen)?.[1];
      if (url) {
        seen = null;
        resolve(url);
      }
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before it listened`)));
  });
}

/** What the loop monitor measured since SIGUSR2: the longest stall and the 99th percentile of the loop's delay. */
export interface LoopReport {
  max_ms: number;
  p99_ms: number;
}

/** The monitor's answer to SIGWINCH, read once the file it writes is whole (a loaded machine may take a while). */
export async function loopReport(file: string): Promise<LoopReport> {
  for (let attempt = 0; ; attempt++) {
    await new Promise((r) => setTimeout(r, 100));
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as LoopReport;
    } catch (error) {
      if (attempt >= 100) throw new Error(`the loop monitor wrote no whole ${file} within 10 s: ${String(error)}`);
    }
  }
}

/** The service's processes: the one started and the request processes it forked (server.ts), not tsx's esbuild. */
export function serviceProcesses(pid: number): number[] {
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return (
          Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === pid &&
          readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('server.ts')
        );
      } catch {
        return false; // gone meanwhile
      }
    });
  return [pid, ...children.map(Number)];
}
