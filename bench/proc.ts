/**
 * What the benches read of a service's processes from /proc: which processes it started (request
 * processes, detection processes, workerd) and the CPU time they used, the figure other load on a
 * shared machine disturbs least.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** Fields after the parenthesised command name of a stat file (the parent is the 2nd, utime and stime the 12th and 13th). */
const fieldsOf = (stat: string) => stat.split(') ')[1].split(' ');
const statFields = (pid: number) => fieldsOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));

/** User and system CPU seconds from those fields. */
const secondsOf = (fields: string[]) => (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;

/** The process and every process below it that is alive. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      parents.set(Number(name), Number(statFields(Number(name))[1]));
    } catch {
      // gone meanwhile
    }
  }
  const found = [pid];
  for (let i = 0; i < found.length; i++) for (const [child, parent] of parents) if (parent === found[i]) found.push(child);
  return found;
}

/** CPU seconds (user + system, all threads) the processes have used; one gone meanwhile counts nothing. */
export function cpuSeconds(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += secondsOf(statFields(pid));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** CPU seconds of a process and of every process below it that is alive. */
export const treeCpuSeconds = (pid: number) => cpuSeconds(descendants(pid));

/**
 * Where a service's CPU time goes: its main thread, libvips' worker threads, its other threads
 * (libuv's pool, which runs sharp's pipelines, the JPEG readers' worker threads, V8's own), the
 * detection processes and any other process it started (the request processes).
 */
export const CPU_PARTS = ['main thread', 'libvips workers', 'other threads', 'detection processes', 'other processes'] as const;
export type CpuPart = (typeof CPU_PARTS)[number];

/** Each thread's and each started process's CPU seconds at one moment, to subtract from a later reading (cpuPartsSince). */
export interface CpuReading {
  pid: number;
  /** The process's own total: it keeps the time of threads that ended. */
  whole: number;
  threads: Map<number, { name: string; seconds: number }>;
  processes: Map<number, { detection: boolean; seconds: number }>;
}

export function readCpu(pid: number): CpuReading {
  const threads = new Map<number, { name: string; seconds: number }>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      threads.set(Number(task), { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), seconds: secondsOf(fieldsOf(stat)) });
    } catch {
      // ended meanwhile
    }
  }
  const processes = new Map<number, { detection: boolean; seconds: number }>();
  for (const child of descendants(pid).slice(1)) {
    try {
      const detection = readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('detection-worker');
      processes.set(child, { detection, seconds: secondsOf(statFields(child)) });
    } catch {
      // ended meanwhile
    }
  }
  return { pid, whole: cpuSeconds([pid]), threads, processes };
}

/** CPU seconds per part between two readings of one process. A thread that ended meanwhile counts with the other threads. */
export function cpuPartsSince(before: CpuReading, after: CpuReading): Record<CpuPart, number> {
  const parts = Object.fromEntries(CPU_PARTS.map((part) => [part, 0])) as Record<CpuPart, number>;
  for (const [tid, { name, seconds }] of after.threads) {
    const spent = seconds - (before.threads.get(tid)?.seconds ?? 0);
    if (tid === after.pid) parts['main thread'] += spent;
    else if (name === 'libvips worker') parts['libvips workers'] += spent;
  }
  parts['other threads'] = after.whole - before.whole - parts['main thread'] - parts['libvips workers'];
  for (const [pid, { detection, seconds }] of after.processes) {
    parts[detection ? 'detection processes' : 'other processes'] += seconds - (before.processes.get(pid)?.seconds ?? 0);
  }
  return parts;
}
