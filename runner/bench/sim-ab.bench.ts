// The simulator before and after a change: an earlier commit's runner (BENCH_SIM_BEFORE, extracted with
// `git archive`) and a copy of this tree's (train.bench.ts copyThisTree) each step a batch of 32 envs of a task
// (approach-tree, explore-diamond) with the same random actions, in alternating 10-step slices of one process, so a
// load spike on the shared machine falls on both alike (separate processes differed by up to 40 % at load 10).
// The code built first in a process runs 5–12 % faster than the same code built second (measured with identical
// trees; presumably the libraries both share, prismarine-physics among them, are optimised for the first one's
// objects), so each task is measured twice, in two processes, once with each code built first; the after/before
// ratio is the geometric mean of the two, which cancels that advantage. Prints each code's CPU seconds (process:
// every thread, garbage collection included; and the main thread alone). The two codes share one heap, so one
// code's garbage may be collected in the other's slice: compare allocation and collections with a heap profile or
// separate runs, not here. `npm run bench sim-ab`.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { GAME_FACTS } from '../src/schema';
import { statSeconds } from './cpu';
import { copyThisTree, extractTree } from './train.bench';

const BEFORE = process.env.BENCH_SIM_BEFORE ?? '5d48107';
const ENVS = 32;
const SLICE = 10;
const SLICES = Number(process.env.BENCH_SIM_SLICES ?? 60);
const TASKS = ['approach-tree', 'explore-diamond'];

interface Measured {
  label: string;
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

/** In this process: the codes built in the order given, warmed up, then stepped in alternating slices. */
function measure(task: string, codes: [label: string, root: string][]): Measured[] {
  const actionCount = GAME_FACTS.actions.length;
  const built = codes.map(([label, root]) => {
    const { SimBatch } = require(path.join(root, 'runner/src/env/sim/vec'));
    const { BUILTIN_TASKS } = require(path.join(root, 'runner/src/tasks'));
    const batch = new SimBatch(BUILTIN_TASKS[task], ENVS, 0) as { step(actions: Int32Array): unknown; reset(seeds: number[]): unknown };
    batch.reset(Array.from({ length: ENVS }, (_, i) => i + 1));
    return { label, batch, cpu: 0, main: 0 };
  });
  for (const a of randomActions(100, actionCount, 1)) for (const c of built) c.batch.step(a);
  for (let k = 0; k < SLICES; k++) {
    const actions = randomActions(SLICE, actionCount, 1000 + k);
    for (const c of k % 2 ? [...built].reverse() : built) {
      const cpu0 = process.cpuUsage(),
        main0 = mainThreadSeconds();
      for (const a of actions) c.batch.step(a);
      const cpu = process.cpuUsage(cpu0);
      c.cpu += (cpu.user + cpu.system) / 1e6;
      c.main += mainThreadSeconds() - main0;
    }
  }
  return built.map(({ label, cpu, main }) => ({ label, cpu, main }));
}

export async function run(): Promise<void> {
  console.log(
    `method: commit ${BEFORE} ("before") and this tree ("after"), ${ENVS} envs each, random actions (the same for both), ` +
      `${SLICES} slices of ${SLICE} steps each after 100 steps of warm-up, the order flipped every slice, in one process under tsx; ` +
      'each task in two processes, before built first and after built first, the ratio their geometric mean; CPU from process.cpuUsage and /proc/thread-self.',
  );
  const before = extractTree(BEFORE),
    after = copyThisTree();
  const steps = ENVS * SLICE * SLICES;
  try {
    for (const task of TASKS) {
      const load0 = loadavg()[0]!;
      const ratios: number[] = [];
      for (const first of ['before', 'after']) {
        const codes = first === 'before' ? [before, after] : [after, before];
        const out = execFileSync(process.execPath, ['--import', 'tsx', __filename, 'measure', task, first, ...codes], { encoding: 'utf8', maxBuffer: 1 << 20 });
        const measured = JSON.parse(out.trim().split('\n').at(-1)!) as Measured[];
        const of = (label: string) => measured.find((m) => m.label === label)!;
        for (const m of measured)
          console.log(
            `${task.padEnd(16)} ${`${first} built first:`.padEnd(20)} ${m.label.padEnd(6)} ${steps.toLocaleString('en')} steps: CPU ${m.cpu.toFixed(2)} s ` +
              `(main thread ${m.main.toFixed(2)}), ${(steps / m.cpu).toFixed(0)} steps per CPU-second`,
          );
        ratios.push(of('after').cpu / of('before').cpu);
      }
      console.log(
        `${task}: after/before CPU ${ratios.map((r) => r.toFixed(3)).join(' and ')} by build order, geometric mean ${Math.sqrt(ratios[0]! * ratios[1]!).toFixed(3)}; ` +
          `load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`,
      );
    }
  } finally {
    rmSync(before, { recursive: true, force: true });
    rmSync(after, { recursive: true, force: true });
  }
}

// The child process of run(): `measure TASK FIRST ROOT_BUILT_FIRST ROOT_BUILT_SECOND`, one JSON line.
if (require.main === module && process.argv[2] === 'measure') {
  const [task, first, rootA, rootB] = process.argv.slice(3) as [string, string, string, string];
  const labels = first === 'before' ? ['before', 'after'] : ['after', 'before'];
  console.log(
    JSON.stringify(
      measure(task, [
        [labels[0]!, rootA],
        [labels[1]!, rootB],
      ]),
    ),
  );
}
