// CPU time from /proc (Linux; 0 elsewhere), the one reader the benches share: the machine is shared, so benches
// report CPU seconds (user + system) beside wall time.
import { readdirSync, readFileSync } from 'node:fs';

/** utime + stime of a process's /proc stat line, seconds (USER_HZ 100); with `reaped`, its reaped children's too. */
export function statSeconds(file: string, reaped: boolean): number {
  try {
    const stat = readFileSync(file, 'utf8');
    // After "pid (comm) ": state is field 3, so utime (14), stime (15), cutime (16), cstime (17) are at 11–14.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0)) / 100;
  } catch {
    return 0; // a process that has gone: its time is in its parent's reaped children
  }
}

/** CPU seconds of this process's reaped children (the CLI runs and sandbox hosts a bench started and waited for). */
export const childrenCpuSeconds = (): number => statSeconds('/proc/self/stat', true) - statSeconds('/proc/self/stat', false);

/** CPU seconds of this process and its reaped children. */
export const cpuSeconds = (): number => statSeconds('/proc/self/stat', true);

/**
 * CPU seconds of a running process tree: the process (all its threads, and the children it has reaped) and,
 * recursively, its live descendants (a reward sandbox host). Linux; 0 elsewhere.
 */
export function treeCpuSeconds(pid: number): number {
  const parents = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return 0;
  }
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(e)]);
    } catch {
      // gone between the listing and the read
    }
  }
  const sum = (p: number): number => statSeconds(`/proc/${p}/stat`, true) + (parents.get(p) ?? []).reduce((t, c) => t + sum(c), 0);
  return sum(pid);
}
