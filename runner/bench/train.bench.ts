// Training speed, before and after: `rewardsmith train` on approach-tree with the bundled dense reward, 65,536
// frames (BENCH_TRAIN_FRAMES), no evaluation, each run in a fresh process (train-process.ts), the code of an
// earlier commit (BENCH_TRAIN_BEFORE, extracted with `git archive`) and this tree's alternated
// (BENCH_TRAIN_PAIRS pairs), on the engines in BENCH_TRAIN_BACKENDS (default js; `wasm,js` compares
// TensorFlow.js). Prints frames per CPU-second of the whole process tree (every thread of the training process
// from its start, and the reward sandbox host), the load average around each run, where the CPU went thread by
// thread, and the phase profile of the main thread. Then the same pairs as users run them (BENCH_TRAIN_CLI_PAIRS,
// default 2): each tree built with its own build.mjs and `rewardsmith train` run from its bundle, wall and CPU of
// the whole process tree, and whether the two wrote the same weights.bin. `npm run bench train`.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { PhaseTotals } from '../src/ppo/profile';
import { childrenCpuSeconds } from './cpu';

const FRAMES = Number(process.env.BENCH_TRAIN_FRAMES ?? 65_536);
const BACKENDS = (process.env.BENCH_TRAIN_BACKENDS ?? 'js').split(',');
/** The code when the speed work began (2026-11-26 11:55 UTC), which "3x, side by side" is measured against; `none` runs this tree only. */
const BEFORE = process.env.BENCH_TRAIN_BEFORE ?? 'e56fc76';
const PAIRS = Number(process.env.BENCH_TRAIN_PAIRS ?? 1);
const CLI_PAIRS = Number(process.env.BENCH_TRAIN_CLI_PAIRS ?? 2);
const ROOT = path.join(__dirname, '..', '..');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

interface ProcessResult {
  backend: string;
  frames: number;
  /** CPU of this process from the start of train() (module loading excluded), as the bench counted it before. */
  processCpuSeconds: number;
  childrenCpuSeconds: number;
  wallSeconds: number;
  phases: Record<string, PhaseTotals>;
  threads: {
    mainThreadCpuSeconds: number;
    mainThreadBeforeFirstPhase: number;
    processBeforeFirstPhase: number;
    bornAtProcessStart: number;
    bornInStartUp: number;
    bornInTraining: number;
    processLifeCpuSeconds: number;
  };
  mainThreadGc: { minorSeconds: number; majorSeconds: number; count: number };
}

interface Run extends ProcessResult {
  label: string;
  loadBefore: string;
  loadAfter: string;
}

const TREE_FILES = ['runner', 'package.json', 'tsconfig.json', 'build.mjs'];

/** The runner's sources at `ref` (and its build script), in a temporary folder that uses this checkout's node_modules. */
export function extractTree(ref: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rs-bench-before-'));
  const tar = execFileSync('git', ['archive', '--format=tar', ref, ...TREE_FILES], { cwd: ROOT, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

/**
 * This checkout's runner as it is on disk (uncommitted changes included), copied like extractTree's: a bench that
 * times two codes in one process loads both from copies, so that neither is the code the bench itself ran before
 * timing (recording states, building worlds), whose JIT state favoured the other side by 3-13 % for identical code.
 */
export function copyThisTree(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rs-bench-after-'));
  for (const f of TREE_FILES) cpSync(path.join(ROOT, f), path.join(dir, f), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

function trainProcess(label: string, backend: string, tree: string): Run {
  const out = mkdtempSync(path.join(tmpdir(), 'rs-bench-train-'));
  const loadBefore = load();
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'train-process.ts'), backend, String(FRAMES), out, tree], {
      encoding: 'utf8',
      timeout: 3_600_000,
    });
    if (r.status !== 0) throw new Error(`training (${label}, ${backend}) failed: ${r.stderr}`);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as ProcessResult;
    return { ...result, label, loadBefore, loadAfter: load() };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * `rewardsmith train` from `tree`'s bundle (dist/cli.js, built by its own build.mjs) for FRAMES frames, no
 * evaluation: wall seconds, CPU seconds of the whole process tree (reaped: the CLI, its threads and its reward
 * host), and the weights it wrote.
 */
function cliTrain(tree: string): { wall: number; cpu: number; weights: Buffer; load: string } {
  const out = mkdtempSync(path.join(tmpdir(), 'rs-bench-cli-'));
  const load0 = load();
  try {
    const cpu0 = childrenCpuSeconds(),
      wall0 = performance.now();
    const r = spawnSync(
      process.execPath,
      [
        path.join(tree, 'runner/bin/rewardsmith.js'),
        'train',
        path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts'),
        '--task',
        'approach-tree',
      ].concat(['--steps', String(FRAMES), '--eval-episodes', '0', '--seed', '0', '--out', out, '--overwrite']),
      { encoding: 'utf8', timeout: 3_600_000 },
    );
    if (r.status !== 0) throw new Error(`rewardsmith train (${tree}) failed: ${r.stderr}`);
    const wall = (performance.now() - wall0) / 1000;
    return { wall, cpu: childrenCpuSeconds() - cpu0, weights: readFileSync(path.join(out, 'checkpoint', 'weights.bin')), load: `${load0} → ${load()}` };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Alternated pairs of `rewardsmith train` from the two trees' bundles, as users run it. */
function cliPairs(before: string): void {
  console.log(`
As users run it: rewardsmith train from each tree's own bundle (node build.mjs), ${CLI_PAIRS} alternated pair(s), js engine:`);
  execFileSync(process.execPath, ['build.mjs'], { cwd: before, stdio: 'ignore' });
  execFileSync(process.execPath, ['build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'ignore' });
  const afterRates: number[] = [],
    ratios: number[] = [];
  for (let pair = 1; pair <= CLI_PAIRS; pair++) {
    const b = cliTrain(before);
    const a = cliTrain(ROOT);
    afterRates.push(FRAMES / a.cpu);
    ratios.push(b.cpu / a.cpu);
    console.log(
      `pair ${pair}: before ${b.wall.toFixed(1)} s wall, ${b.cpu.toFixed(1)} CPU s (${(FRAMES / b.cpu).toFixed(0)} frames per CPU-second), load ${b.load} | ` +
        `after ${a.wall.toFixed(1)} s wall, ${a.cpu.toFixed(1)} CPU s (${(FRAMES / a.cpu).toFixed(0)}), load ${a.load} | weights.bin ${a.weights.equals(b.weights) ? 'identical' : 'different'}`,
    );
  }
  // The two training targets, pair by pair: every pair is one side-by-side measurement, so the verdict counts pairs.
  const range = (xs: number[], digits: number) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
  const atLeast = (xs: number[], bound: number) => xs.filter((x) => x >= bound).length;
  console.log(
    `targets, over the ${CLI_PAIRS} pair(s): ≥ ${TARGET_FRAMES_PER_CPU_SECOND.toLocaleString('en')} frames per CPU-second in ${atLeast(afterRates, TARGET_FRAMES_PER_CPU_SECOND)} ` +
      `(after: ${range(afterRates, 0)}); ≥ ${TARGET_RATIO}× the before side in ${atLeast(ratios, TARGET_RATIO)} (after / before: ${range(ratios, 2)}×)`,
  );
}
/** The training-speed targets this bench reports against: frames per CPU-second, and the factor over the before side. */
const TARGET_FRAMES_PER_CPU_SECOND = 3000;
const TARGET_RATIO = 3;

/** Every thread's CPU from the process's start plus the reward host's. */
const totalCpu = (r: ProcessResult) => r.threads.processLifeCpuSeconds + r.childrenCpuSeconds;
const rate = (r: ProcessResult) => r.frames / totalCpu(r);

const LOOP_PHASES = [
  'act: policy forward',
  'act: sample + buffer',
  'env step (wait for workers)',
  'reward (wait for sandbox)',
  'GAE',
  'PPO update',
  'checkpoint + metrics',
];

/** Where the CPU went, thread by thread (seconds). */
function threadRows(r: ProcessResult): [string, number][] {
  const t = r.threads;
  const loop = LOOP_PHASES.reduce((s, p) => s + (r.phases[p]?.cpuSeconds ?? 0), 0);
  const sampled = t.mainThreadCpuSeconds + t.bornAtProcessStart + t.bornInStartUp + t.bornInTraining;
  return [
    ['main thread: start-up (modules, sandbox, envs) to the first rollout', t.mainThreadBeforeFirstPhase],
    ['main thread: the training loop (phases below)', loop],
    ['main thread: the rest (between phases, close, summary)', t.mainThreadCpuSeconds - t.mainThreadBeforeFirstPhase - loop],
    ['threads started with the envs: the env worker (its start-up and its shard of envs)', t.bornInStartUp],
    ['threads started during training: the PPO value thread', t.bornInTraining],
    ["threads from the process's start: V8's and libuv's helpers (GC, compilation; all isolates; under tsx its loader)", t.bornAtProcessStart],
    ['not seen by the 100 ms sampler (threads that exited between samples)', t.processLifeCpuSeconds - sampled],
    ['reward sandbox host (child process)', r.childrenCpuSeconds],
    ['whole run', totalCpu(r)],
  ];
}

function printTable(header: string[], rows: string[][]): void {
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

export async function run(): Promise<void> {
  console.log(
    'reference (2-core AMD EPYC VM, fused engine, every thread from the start): 2026-11-26 12:47-12:58, load average 16.5-20.0: e56fc76 784 frames per CPU-second (83.6 s: main thread 45.3, env worker 18.5, helper threads 13.8, reward host 6.0); ' +
      '19:01-19:26, load 8-12, two pairs: 820a9e3 948 / 886 (69.1 / 74.0 s, PPO update 17.6 / 19.0), with the WebAssembly kernels 1,207 / 1,213 (54.3 / 54.0 s, PPO update 5.3 / 5.4); ' +
      '20:34-20:41, idle (load 1.3-1.9), three pairs: 820a9e3 1,137 / 1,145 / 1,260, de375c1 1,487 / 1,656 / 1,717 (57.6 / 57.3 / 52.0 -> 44.1 / 39.6 / 38.2 s). ' +
      '2-core Intel Xeon VM (the same code runs about 1.5x slower), 2026-11-27: 5d48107 1,271 at 09:11 (load 0.9-1.5; 51.6 CPU s: env stepping 34.2, PPO update 7.1, helper threads 5.5); ' +
      'grazed ground in one loop, 2 pairs at load 3.3-4.3: 5d48107 1,100 / 975 -> 1,215 / 1,183; 2 pairs with nothing else running (load 1.8-2.3): 905 / 952 -> 1,134 / 1,292 (1.31x). ' +
      '2-core AMD EPYC VM again, 2026-11-28 04:37-04:55, load 1.4-2.1, 7 bundled pairs: e56fc76 1,516-1,926 -> 2,953-3,585 (1.71-1.98x, the same weights).',
  );
  console.log(
    `method: train() on approach-tree, dense reward, seed 0, 32 envs, ${FRAMES.toLocaleString('en')} frames, no evaluation, engines ${BACKENDS.join(', ')}, ` +
      `one fresh process per run under tsx, ${BEFORE === 'none' ? 'this tree only' : `commit ${BEFORE} ("before") and this tree ("after") alternated, ${PAIRS} pair(s)`}; ` +
      'CPU = user + sys of every thread of the process from its start (module loading included) and of the reward sandbox host; ' +
      `${cpus().length} cores. The phase table charges the main thread's own CPU (Linux schedstat); waits show the CPU of the thread that waits, ` +
      'not of what it waits for.',
  );
  const before = BEFORE === 'none' ? null : extractTree(BEFORE);
  const runs: Run[] = [];
  try {
    for (let pair = 0; pair < PAIRS; pair++) {
      for (const backend of BACKENDS) {
        const trees: [string, string][] = before
          ? [
              ['before', before],
              ['after', ROOT],
            ]
          : [['this tree', ROOT]];
        for (const [label, tree] of trees) {
          const r = trainProcess(`${label} ${backend}`, backend, tree);
          runs.push(r);
          console.log(
            `${r.label.padEnd(10)} ${rate(r).toFixed(0).padStart(6)} frames per CPU-second | CPU ${totalCpu(r).toFixed(1)} s ` +
              `(process ${r.threads.processLifeCpuSeconds.toFixed(1)}, of it in train() ${r.processCpuSeconds.toFixed(1)}; reward host ${r.childrenCpuSeconds.toFixed(1)}) | ` +
              `wall ${r.wallSeconds.toFixed(1)} s | load average ${r.loadBefore} → ${r.loadAfter}`,
          );
        }
      }
    }
    if (before && CLI_PAIRS > 0) cliPairs(before);
  } finally {
    if (before) rmSync(before, { recursive: true, force: true });
  }
  if (runs.length === 0) return; // BENCH_TRAIN_PAIRS=0: the bundled pairs only
  if (before) {
    for (const backend of BACKENDS) {
      const of = (label: string) => runs.filter((r) => r.label === `${label} ${backend}`);
      const mean = (rs: Run[]) => rs.reduce((s, r) => s + rate(r), 0) / rs.length;
      console.log(`${backend}: after / before, frames per CPU-second: ${(mean(of('after')) / mean(of('before'))).toFixed(2)}× (means over ${PAIRS} pair(s))`);
    }
  }
  const columns = runs.map((r, i) => `${r.label}${PAIRS > 1 ? ` #${Math.floor(i / (runs.length / PAIRS)) + 1}` : ''}`);
  console.log('\nCPU seconds by thread:');
  const byThread = runs.map(threadRows);
  printTable(
    ['thread', ...columns],
    byThread[0]!.map(([name], i) => [name, ...byThread.map((rows) => rows[i]![1].toFixed(1))]),
  );
  printTable(
    ["main thread's GC pauses (s, minor / major)", ...columns],
    [['', ...runs.map((r) => `${r.mainThreadGc.minorSeconds.toFixed(2)} / ${r.mainThreadGc.majorSeconds.toFixed(2)}`)]],
  );
  console.log('\nPhases of the main thread (CPU s / wall s; calls in the first run):');
  const phases = [...new Set(runs.flatMap((r) => Object.keys(r.phases)))];
  printTable(
    ['phase', 'calls', ...columns],
    phases.map((p) => [
      p,
      String(runs[0]!.phases[p]?.calls ?? '—'),
      ...runs.map((r) => {
        const t = r.phases[p];
        return t ? `${t.cpuSeconds.toFixed(2)} / ${t.wallSeconds.toFixed(1)}` : '—';
      }),
    ]),
  );
}

if (require.main === module) void run();
