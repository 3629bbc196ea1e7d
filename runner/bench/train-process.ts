// One profiled training run in its own process, for train.bench.ts: `node --import tsx train-process.ts
// BACKEND FRAMES OUT`. Prints one JSON line: frames, CPU seconds of this process (main thread + env worker
// threads) and of its reaped children (the reward sandbox host), wall seconds, and the phase profile.
import path from 'node:path';
import { train } from '../src/runs/train';
import { PhaseProfile } from '../src/ppo/profile';
import type { BackendChoice } from '../src/ppo/backend';
import { childrenCpuSeconds } from './cpu';

async function main() {
  const [backend, frames, out] = process.argv.slice(2);
  const root = path.join(__dirname, '..', '..');
  const profile = new PhaseProfile();
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
  console.log(
    JSON.stringify({
      backend: summary.backend,
      frames: summary.env_steps,
      processCpuSeconds: (cpu.user + cpu.system) / 1e6,
      childrenCpuSeconds: childrenCpuSeconds() - children0,
      wallSeconds: (performance.now() - wall0) / 1000,
      phases: profile.toJSON(),
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
