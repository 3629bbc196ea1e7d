// Where a training run's time goes, phase by phase (`npm run bench train` prints it). Each phase is charged
// the main thread's own CPU time (Linux: /proc/thread-self/schedstat, nanoseconds) and its wall time: a phase
// that waits on the env workers or the reward host shows little CPU and much wall, and the CPU it waits for is
// in the process totals the bench reads beside it. Off (no profile passed), nothing is measured.
import { readFileSync } from 'node:fs';

export interface PhaseTotals {
  calls: number;
  /** CPU seconds of the calling thread inside the phase. */
  cpuSeconds: number;
  wallSeconds: number;
}

/** This thread's CPU time in nanoseconds; the whole process's where the kernel does not say per thread. */
export function threadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ', 1)[0]);
  } catch {
    const u = process.cpuUsage();
    return (u.user + u.system) * 1000;
  }
}

/** Where the run stood when its first phase began: the CPU and wall spent before it (start-up). */
export interface StartMark {
  /** CPU seconds of the calling thread before the first phase. */
  threadCpuSeconds: number;
  /** CPU seconds of the whole process (every thread) before the first phase. */
  processCpuSeconds: number;
}

export class PhaseProfile {
  readonly phases = new Map<string, PhaseTotals>();
  /** Set when the first phase begins (null until then). */
  start: StartMark | null = null;

  private mark(): void {
    if (this.start) return;
    const u = process.cpuUsage();
    this.start = { threadCpuSeconds: threadCpuNs() / 1e9, processCpuSeconds: (u.user + u.system) / 1e6 };
  }

  private charge(phase: string, cpuStart: number, wallStart: number): void {
    const p = this.phases.get(phase) ?? { calls: 0, cpuSeconds: 0, wallSeconds: 0 };
    p.calls++;
    p.cpuSeconds += (threadCpuNs() - cpuStart) / 1e9;
    p.wallSeconds += (performance.now() - wallStart) / 1000;
    this.phases.set(phase, p);
  }

  measure<T>(phase: string, fn: () => T): T {
    this.mark();
    const cpu = threadCpuNs(),
      wall = performance.now();
    try {
      return fn();
    } finally {
      this.charge(phase, cpu, wall);
    }
  }

  async measureAsync<T>(phase: string, fn: () => Promise<T>): Promise<T> {
    this.mark();
    const cpu = threadCpuNs(),
      wall = performance.now();
    try {
      return await fn();
    } finally {
      this.charge(phase, cpu, wall);
    }
  }

  toJSON(): Record<string, PhaseTotals> {
    return Object.fromEntries(this.phases);
  }
}

/** Runs `fn` under `phase` when profiling, else just runs it. */
export function measured<T>(profile: PhaseProfile | undefined, phase: string, fn: () => T): T {
  return profile ? profile.measure(phase, fn) : fn();
}

export function measuredAsync<T>(profile: PhaseProfile | undefined, phase: string, fn: () => Promise<T>): Promise<T> {
  return profile ? profile.measureAsync(phase, fn) : fn();
}
