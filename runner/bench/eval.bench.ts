// Held-out evaluation speed, the figure the target names (100 held-out approach-tree episodes ≤ 20 s):
// `rewardsmith eval` (the bundled CLI, built first) of an approach-tree checkpoint on 100 held-out episodes, as
// a whole process: wall time (and its phases from the command's events: the episodes, then the report), CPU
// (user + sys of the process and of the reward sandbox host it reaps), steps per second and per CPU-second, the
// success rate with its 95 % interval, the load average around the run and the machine. The checkpoint is trained first (`rewardsmith train`, dense reward, 65,536 frames, no
// evaluation; BENCH_EVAL_TRAIN_FRAMES) unless BENCH_EVAL_CHECKPOINT names one. `npm run bench eval`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { formatRate } from '../src/stats';
import { childrenCpuSeconds } from './cpu';

const ROOT = path.join(__dirname, '..', '..');
const CLI = path.join(ROOT, 'runner/bin/rewardsmith.js');
const TRAIN_FRAMES = Number(process.env.BENCH_EVAL_TRAIN_FRAMES ?? 65_536);
const EPISODES = Number(process.env.BENCH_EVAL_EPISODES ?? 100);
const TASK = 'approach-tree';
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** Runs the CLI once; returns its CPU seconds (with what it reaped), wall seconds and its events (stdout). */
function cli(args: string[]): { cpu: number; wall: number; events: { type: string; t: number }[]; end: number } {
  const cpu0 = childrenCpuSeconds(),
    t0 = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args, '--events', 'ndjson'], { cwd: ROOT, encoding: 'utf8', timeout: 3_600_000, maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`rewardsmith ${args[0]} failed: ${r.stderr}`);
  const events = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type: string; t: number });
  return { cpu: childrenCpuSeconds() - cpu0, wall: (performance.now() - t0) / 1000, events, end: Date.now() };
}

/** The machine, in words: its cores and their model. */
const machine = () => `${cpus().length} × ${cpus()[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown CPU'}`;

export async function run(): Promise<void> {
  const build = spawnSync(process.execPath, [path.join(ROOT, 'build.mjs')], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`build failed: ${build.stderr}`);
  const out = mkdtempSync(path.join(tmpdir(), 'rs-bench-eval-'));
  try {
    let checkpoint = process.env.BENCH_EVAL_CHECKPOINT;
    if (!checkpoint) {
      checkpoint = path.join(out, 'run');
      const reward = path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts');
      const before = load();
      const t = cli([
        'train',
        reward,
        '--task',
        TASK,
        '--steps',
        String(TRAIN_FRAMES),
        '--eval-episodes',
        '0',
        '--no-check',
        '--backend',
        'js',
        '--out',
        checkpoint,
      ]);
      console.log(
        `checkpoint: rewardsmith train, approach-tree, dense reward, ${TRAIN_FRAMES.toLocaleString('en')} frames, fused JS: ${t.cpu.toFixed(1)} CPU s, ${t.wall.toFixed(1)} s wall | load average ${before} → ${load()}`,
      );
    }
    console.log(
      `method: \`rewardsmith eval CHECKPOINT --episodes ${EPISODES} --backend js\` (dist/cli.js, just built) as a child process; CPU = user + sys of it and of the ` +
        `reward sandbox host it reaps, start-up and the report included; ${machine()}. Target: ≤ 20 s wall for 100 episodes.`,
    );
    const evalDir = path.join(out, 'eval');
    const before = load();
    const e = cli(['eval', checkpoint, '--episodes', String(EPISODES), '--backend', 'js', '--out', evalDir]);
    const summary = JSON.parse(readFileSync(path.join(evalDir, 'summary.json'), 'utf8')) as {
      eval: { episodes: number; avg_steps: number; success: { n: number; rate: number | null; ci95: [number, number] } };
    };
    const steps = Math.round(summary.eval.avg_steps * summary.eval.episodes);
    // Phases from the command's events: start-up until `started`, the episodes until `eval`, then the records,
    // the report (its playback) and exit.
    const at = (type: string) => e.events.find((ev) => ev.type === type)?.t;
    const started = at('started'),
      evaluated = at('eval');
    const phases =
      started !== undefined && evaluated !== undefined
        ? ` = the episodes ${((evaluated - started) / 1000).toFixed(1)} s, then the report and exit ${((e.end - evaluated) / 1000).toFixed(1)} s`
        : '';
    console.log(
      `held-out evaluation, ${summary.eval.episodes} ${TASK} episodes (${steps.toLocaleString('en')} steps in them): **${e.wall.toFixed(1)} s wall**${phases}; ` +
        `${e.cpu.toFixed(1)} CPU s; ${(steps / e.wall).toFixed(0)} steps per second, ${(steps / e.cpu).toFixed(0)} per CPU-second; ` +
        `success ${formatRate(summary.eval.success)} | load average ${before} → ${load()} | ${machine()}; target ≤ 20 s wall`,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (require.main === module) void run();
