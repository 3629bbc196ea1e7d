// One profiled training run in its own process, for train.bench.ts: `node --import tsx train-process.ts
// BACKEND FRAMES OUT`. Prints one JSON line: frames, CPU seconds of this process (main thread + env worker
// threads) and of its reaped children (the reward sandbox host), wall seconds, and the phase profile.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { train } from '../src/runs/train';
import { PhaseProfile } from '../src/ppo/profile';
import type { BackendChoice } from '../src/ppo/backend';

/** CPU seconds of this process's reaped children (Linux /proc/self/stat cutime + cstime; 0 elsewhere). */
function childrenCpuSeconds(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'latin1').split(') ')[1]!.split(' ');
    // After "pid (comm) ": state is field 3, so cutime (16) and cstime (17) are at 13 and 14 here; ticks of 1/100 s.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

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
