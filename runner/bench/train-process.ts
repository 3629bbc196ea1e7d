// One profiled training run in its own process, for train.bench.ts: `node --import tsx train-process.ts
// BACKEND FRAMES OUT [ROOT]`, ROOT the source tree to train with (default: this one; the bench passes an
// extracted earlier commit for its before/after pair). Prints one JSON line: frames, CPU seconds of this process (main thread + env worker
// threads) and of its reaped children (the reward sandbox host), wall seconds, the phase profile, the main
// thread's CPU before the first phase (start-up), every other thread's CPU by when it started (ThreadSampler) and the
// main thread's garbage-collection pauses.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import type { train as Train } from '../src/runs/train';
import { PhaseProfile, threadCpuNs } from '../src/ppo/profile';
import type { BackendChoice } from '../src/ppo/backend';
import { childrenCpuSeconds } from './cpu';

/** When a thread was first seen: before train() began, while it started (envs, sandbox), or once training ran. */
type ThreadBirth = 'process start' | 'start-up' | 'training';

/**
 * Every thread of this process but the main one, from /proc/self/task/TID/schedstat every 100 ms: its CPU seconds at
 * the last sample and when it was first seen. A thread that exits (the env worker, the PPO value thread) keeps its
 * last sample, so its CPU is known to within 100 ms of its life; none of them is named, so the time of birth tells
 * them apart: the env worker starts with the envs, the value thread at the first PPO update.
 */
class ThreadSampler {
  private readonly threads = new Map<number, { born: ThreadBirth; cpuSeconds: number }>();
  private readonly timer: NodeJS.Timeout;
  /** `birth` says what a thread first seen now is; the threads there at construction are 'process start'. */
  constructor(private readonly birth: () => ThreadBirth) {
    this.sample('process start');
    this.timer = setInterval(() => this.sample(this.birth()), 100);
    this.timer.unref();
  }
  private sample(born: ThreadBirth): void {
    for (const name of readdirSync('/proc/self/task')) {
      const tid = Number(name);
      if (tid === process.pid) continue;
      try {
        const cpuSeconds = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ', 1)[0]) / 1e9;
        const known = this.threads.get(tid);
        if (known) known.cpuSeconds = cpuSeconds;
        else this.threads.set(tid, { born, cpuSeconds });
      } catch {
        // ended meanwhile
      }
    }
  }
  /** CPU seconds of the threads first seen at `born`. */
  total(born: ThreadBirth): number {
    let sum = 0;
    for (const t of this.threads.values()) if (t.born === born) sum += t.cpuSeconds;
    return sum;
  }
  stop(): void {
    this.sample(this.birth());
    clearInterval(this.timer);
  }
}

async function main() {
  const [backend, frames, out, tree] = process.argv.slice(2);
  const root = path.join(__dirname, '..', '..');
  const { train } = require(path.join(tree ?? root, 'runner/src/runs/train')) as { train: typeof Train };
  const profile = new PhaseProfile();
  const gc = { minorSeconds: 0, majorSeconds: 0, count: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) gc.minorSeconds += e.duration / 1000;
      else gc.majorSeconds += e.duration / 1000;
      gc.count++;
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const sampler = new ThreadSampler(() => (profile.start ? 'training' : 'start-up'));
  const cpu0 = process.cpuUsage(),
    children0 = childrenCpuSeconds(),
    wall0 = performance.now();
  const summary = await train({
    rewardFile: path.join(root, 'runner/rewards/approach-tree.dense.reward.ts'),
    task: 'approach-tree',
    steps: Number(frames),
    seed: 0,
    out: out!,
    overwrite: true,
    backend: backend as BackendChoice,
    evalEpisodes: 0,
    profile,
  });
  const cpu = process.cpuUsage(cpu0);
  const mainThread = threadCpuNs() / 1e9;
  sampler.stop();
  gcObserver.disconnect();
  console.log(
    JSON.stringify({
      backend: summary.backend,
      frames: summary.env_steps,
      processCpuSeconds: (cpu.user + cpu.system) / 1e6,
      childrenCpuSeconds: childrenCpuSeconds() - children0,
      wallSeconds: (performance.now() - wall0) / 1000,
      phases: profile.toJSON(),
      threads: {
        // The process's whole life (module loading before main() included), as /proc counts it.
        mainThreadCpuSeconds: mainThread,
        mainThreadBeforeFirstPhase: profile.start?.threadCpuSeconds ?? mainThread,
        processBeforeFirstPhase: profile.start?.processCpuSeconds ?? 0,
        // Every other thread by when it was first seen (its CPU at the last sample, for one that exited).
        bornAtProcessStart: sampler.total('process start'),
        bornInStartUp: sampler.total('start-up'),
        bornInTraining: sampler.total('training'),
        processLifeCpuSeconds: (() => {
          const u = process.cpuUsage();
          return (u.user + u.system) / 1e6;
        })(),
      },
      mainThreadGc: gc,
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
