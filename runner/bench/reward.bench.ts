// Reward calls per second through the sandbox (child host + isolated-vm isolate, or Pyodide for the Python
// twins `*.reward.py`), for each bundled example reward: 64 envs stepped in batches, on scripted observation sequences of the reward's own task (the same
// generator the tests use). Counts everything the trainer pays per step: packing the observations into numbers, IPC to
// the host, the isolate call with episode state, and the Float64Array back. Besides wall-clock calls/s it
// reports calls per CPU-second (trainer process + sandbox host, from process.cpuUsage and /proc), which
// stays meaningful when other jobs load the machine.
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { RewardSandbox } from '../src/reward';
import { BUILTIN_TASKS, successTargets } from '../src/tasks';
import { scriptedTrajectory } from '../test/fixtures/rewards/trajectory';
import type { StepObservation } from '../src/schema';

const NUM_ENVS = 64;
const STEPS = 400; // per env; episodes restart (beginEpisodes) when a trajectory runs out
const WARMUP_STEPS = 50;
const ROUNDS = 3; // timed passes over the trajectories; the best is reported (the machine is shared)

export async function run(): Promise<void> {
  const dir = path.join(__dirname, '..', 'rewards');
  const files = readdirSync(dir)
    .filter((f) => /\.reward\.(ts|py)$/.test(f))
    // BENCH_REWARD=approach-cow.dense benches that reward's TypeScript and Python versions only.
    .filter((f) => !process.env.BENCH_REWARD || f.startsWith(process.env.BENCH_REWARD))
    .sort();
  const perCpuOf = new Map<string, number>();
  console.log(
    `method: ${NUM_ENVS} envs batched per step, ${ROUNDS} × ${STEPS} steps after ${WARMUP_STEPS} warm-up steps, best round; time = step() round trip (packing the observations, IPC to the host, the isolate calls, rewards back)`,
  );
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}\n`);
  console.log('| reward | calls/s (wall) | µs per step (64 calls) | calls per CPU-second | observations per step, as JSON |');
  console.log('|---|---:|---:|---:|---:|');
  for (const f of files) {
    const file = path.join(dir, f);
    const id = /^(?:\/\/|#) task: (\S+)/m.exec(readFileSync(file, 'utf8'))?.[1];
    const task = id ? BUILTIN_TASKS[id] : undefined;
    if (!task) throw new Error(`${f}: no known // task: header`);
    const target = successTargets(task)[0]!;
    const trajectories: StepObservation[][] = Array.from({ length: NUM_ENVS }, (_, e) =>
      scriptedTrajectory({ world: task.world, target, steps: STEPS, seed: 1000 + e, attack: task.attack }),
    );
    const stepObs = (k: number) => trajectories.map((t) => t[k]!);
    const envs = [...Array(NUM_ENVS).keys()];
    const sandbox = await RewardSandbox.open(file, NUM_ENVS, { attack: task.attack });
    try {
      await sandbox.beginEpisodes(envs, stepObs(0));
      for (let k = 1; k <= WARMUP_STEPS; k++) await sandbox.step(stepObs(k));
      let best = Infinity;
      let bestCpu = Infinity;
      for (let round = 0; round < ROUNDS; round++) {
        await sandbox.beginEpisodes(envs, stepObs(0));
        const cpu0 = cpuSeconds(sandbox.hostPid);
        const t0 = process.hrtime.bigint();
        for (let k = 1; k <= STEPS; k++) await sandbox.step(stepObs(k));
        best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
        bestCpu = Math.min(bestCpu, cpuSeconds(sandbox.hostPid) - cpu0);
      }
      const callsPerSec = (NUM_ENVS * STEPS) / best;
      const usPerStep = (best / STEPS) * 1e6;
      const jsonBytes = JSON.stringify(stepObs(STEPS / 2)).length;
      const perCpu = bestCpu > 0 ? Math.round((NUM_ENVS * STEPS) / bestCpu).toLocaleString('en-US') : 'n/a';
      perCpuOf.set(f, (NUM_ENVS * STEPS) / bestCpu);
      console.log(`| ${f} | ${Math.round(callsPerSec).toLocaleString('en-US')} | ${usPerStep.toFixed(0)} | ${perCpu} | ${(jsonBytes / 1024).toFixed(1)} KiB |`);
    } finally {
      await sandbox.close();
    }
  }
  // Python against TypeScript, the same reward written twice: what a training run pays for the language.
  for (const [f, py] of perCpuOf) {
    const ts = perCpuOf.get(f.replace(/\.py$/, '.ts'));
    if (f.endsWith('.py') && ts)
      console.log(
        `\n${f}: TypeScript costs ${(ts / py).toFixed(2)}× fewer CPU-seconds per call than Python (${Math.round(ts).toLocaleString('en-US')} vs ${Math.round(py).toLocaleString('en-US')} calls per CPU-second)`,
      );
  }
}

/** CPU seconds (user + system) used so far by this process and the sandbox host (Linux /proc; host part 0 elsewhere). */
function cpuSeconds(hostPid: number | undefined): number {
  const own = process.cpuUsage();
  let host = 0;
  try {
    // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised command name) are utime and stime in ticks.
    const stat = readFileSync(`/proc/${hostPid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    host = (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    host = 0;
  }
  return (own.user + own.system) / 1e6 + host;
}
