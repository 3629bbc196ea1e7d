// The simulator before and after a change, in one process: an earlier commit's runner (BENCH_SIM_BEFORE,
// extracted with `git archive`) and this tree's each step a batch of 32 envs of a task (approach-tree,
// explore-diamond) with the same random actions, in alternating 10-step slices, so a load spike on the shared
// machine falls on both alike (separate processes differed by up to 40 % at load 10). Prints each code's CPU
// seconds (process: every thread, garbage collection included; and the main thread alone). The two share one
// heap, so one code's garbage may be collected in the other's slice: compare allocation and collections with a
// heap profile or separate runs, not here. `npm run bench sim-ab`.
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { GAME_FACTS } from '../src/schema';
import { statSeconds } from './cpu';
import { extractTree } from './train.bench';

const BEFORE = process.env.BENCH_SIM_BEFORE ?? '5d48107';
const ENVS = 32;
const SLICE = 10;
const SLICES = Number(process.env.BENCH_SIM_SLICES ?? 60);
const ROOT = path.join(__dirname, '..', '..');

interface Code {
  label: string;
  batch: { step(actions: Int32Array): unknown };
  cpu: number;
  main: number;
}

const mainThreadSeconds = () => statSeconds('/proc/thread-self/stat', false);

function randomActions(count: number, n: number, seed: number): Int32Array[] {
  let s = seed;
  return Array.from({ length: count }, () =>
    Int32Array.from({ length: ENVS }, () => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return (s >>> 16) % n;
    }),
  );
}

export async function run(): Promise<void> {
  console.log(
    `method: commit ${BEFORE} ("before") and this tree ("after") in one process under tsx, ${ENVS} envs each, random actions (the same for both), ` +
      `${SLICES} slices of ${SLICE} steps each after 100 steps of warm-up, the order flipped every slice; CPU from process.cpuUsage and /proc/thread-self.`,
  );
  const before = extractTree(BEFORE);
  try {
    const actionCount = GAME_FACTS.actions.length;
    for (const task of ['approach-tree', 'explore-diamond']) {
      const codes: Code[] = [
        ['before', before],
        ['after', ROOT],
      ].map(([label, root]) => {
        const { SimBatch } = require(path.join(root!, 'runner/src/env/sim/vec'));
        const { BUILTIN_TASKS } = require(path.join(root!, 'runner/src/tasks'));
        const batch = new SimBatch(BUILTIN_TASKS[task], ENVS, 0);
        batch.reset(Array.from({ length: ENVS }, (_, i) => i + 1));
        return { label: label!, batch, cpu: 0, main: 0 };
      });
      for (const a of randomActions(100, actionCount, 1)) for (const c of codes) c.batch.step(a);
      const load0 = loadavg()[0]!;
      for (let k = 0; k < SLICES; k++) {
        const actions = randomActions(SLICE, actionCount, 1000 + k);
        for (const c of k % 2 ? [...codes].reverse() : codes) {
          const cpu0 = process.cpuUsage(),
            main0 = mainThreadSeconds();
          for (const a of actions) c.batch.step(a);
          const cpu = process.cpuUsage(cpu0);
          c.cpu += (cpu.user + cpu.system) / 1e6;
          c.main += mainThreadSeconds() - main0;
        }
      }
      for (const c of codes)
        console.log(
          `${task.padEnd(16)} ${c.label.padEnd(6)} ${(ENVS * SLICE * SLICES).toLocaleString('en')} steps: CPU ${c.cpu.toFixed(2)} s (main thread ${c.main.toFixed(2)}), ` +
            `${((ENVS * SLICE * SLICES) / c.cpu).toFixed(0)} steps per CPU-second`,
        );
      console.log(`load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`);
    }
  } finally {
    rmSync(before, { recursive: true, force: true });
  }
}
