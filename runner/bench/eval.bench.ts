// Held-out evaluation speed: `rewardsmith eval` (the bundled CLI, built first) of an approach-tree checkpoint
// on 100 held-out episodes, as a whole process: CPU (user + sys of the process and of the reward sandbox host
// it reaps), wall time, the episodes' steps and the success rate with its 95 % interval, with the load average
// around the run. The checkpoint is trained first (`rewardsmith train`, dense reward, 65,536 frames, no
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
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** Runs the CLI once; returns its CPU seconds (with what it reaped) and wall seconds. */
function cli(args: string[]): { cpu: number; wall: number } {
  const cpu0 = childrenCpuSeconds(),
    t0 = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args, '--events', 'ndjson'], { cwd: ROOT, encoding: 'utf8', timeout: 3_600_000 });
  if (r.status !== 0) throw new Error(`rewardsmith ${args[0]} failed: ${r.stderr}`);
  return { cpu: childrenCpuSeconds() - cpu0, wall: (performance.now() - t0) / 1000 };
}

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
        'approach-tree',
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
        `reward sandbox host it reaps, start-up and the report included; ${cpus().length} cores. Target: ≤ 20 s for 100 episodes.`,
    );
    const evalDir = path.join(out, 'eval');
    const before = load();
    const e = cli(['eval', checkpoint, '--episodes', String(EPISODES), '--backend', 'js', '--out', evalDir]);
    const summary = JSON.parse(readFileSync(path.join(evalDir, 'summary.json'), 'utf8')) as {
      eval: { episodes: number; avg_steps: number; success: { n: number; rate: number | null; ci95: [number, number] } };
    };
    const steps = Math.round(summary.eval.avg_steps * summary.eval.episodes);
    console.log(
      `eval: ${e.wall.toFixed(1)} s wall, ${e.cpu.toFixed(1)} CPU s for ${summary.eval.episodes} episodes (${steps.toLocaleString('en')} steps in them, ` +
        `${(steps / e.cpu).toFixed(0)} per CPU-second); success ${formatRate(summary.eval.success)} | load average ${before} → ${load()}`,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (require.main === module) void run();
