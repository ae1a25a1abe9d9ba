/**
 * What the benches read of a service's processes from /proc: which processes it started (request
 * processes, detection processes, workerd) and the CPU time they used, the figure other load on a
 * shared machine disturbs least.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** Fields after the parenthesised command name of /proc/<pid>/stat (the parent is the 2nd, utime and stime the 12th and 13th). */
const statFields = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');

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
      const fields = statFields(pid);
      total += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** CPU seconds of a process and of every process below it that is alive. */
export const treeCpuSeconds = (pid: number) => cpuSeconds(descendants(pid));
