// One profiled training run in its own process, for train.bench.ts: `node --import tsx train-process.ts
// BACKEND FRAMES OUT [ROOT]`, ROOT the source tree to train with (default: this one; the bench passes an
// extracted earlier commit for its before/after pair). Prints one JSON line: frames, CPU seconds of this process (main thread + env worker
// threads) and of its reaped children (the reward sandbox host), wall seconds, the phase profile, the main
// thread's CPU before the first phase (start-up), the CPU of every thread still alive at the end (main thread,
// V8's and libuv's helper threads) and the main thread's garbage-collection pauses.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import type { train as Train } from '../src/runs/train';
import { PhaseProfile, threadCpuNs } from '../src/ppo/profile';
import type { BackendChoice } from '../src/ppo/backend';
import { childrenCpuSeconds } from './cpu';

/** CPU seconds of each live thread of this process but the calling one, from /proc/self/task/TID/schedstat. */
function otherThreadsCpuSeconds(): number {
  let sum = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    if (Number(tid) === process.pid) continue;
    try {
      sum += Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ', 1)[0]) / 1e9;
    } catch {
      // ended meanwhile
    }
  }
  return sum;
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
        liveHelperThreadsCpuSeconds: otherThreadsCpuSeconds(),
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
