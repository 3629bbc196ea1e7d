// The paper's table, reproduced in kind: on approach-tree and approach-cow, at the paper's budget of 256,000
// frames, PPO on the designed dense example reward vs the sparse (success-only) reward, each evaluated on
// 100 held-out worlds. `npm run bench table` (optionally BENCH_TABLE_STEPS / BENCH_TABLE_EVAL / BENCH_TABLE_SEED).
import { mkdtempSync, readFileSync } from 'node:fs';
import os, { loadavg } from 'node:os';
import path from 'node:path';
import { train, resultTable, DEFAULT_STEPS } from '../src/runs/train';
import { RUN_FILES, type RunSummary, type UpdateMetrics } from '../src/records';

const ROOT = path.resolve(__dirname, '../..');
const ROWS: { task: string; reward: string }[] = [
  { task: 'approach-tree', reward: 'approach-tree.dense.reward.ts' },
  { task: 'approach-tree', reward: 'approach-tree.sparse.reward.ts' },
  { task: 'approach-cow', reward: 'approach-cow.dense.reward.ts' },
  { task: 'approach-cow', reward: 'approach-cow.sparse.reward.ts' },
];

export async function run(): Promise<void> {
  const steps = Number(process.env.BENCH_TABLE_STEPS ?? DEFAULT_STEPS);
  const evalEpisodes = Number(process.env.BENCH_TABLE_EVAL ?? 100);
  const seed = Number(process.env.BENCH_TABLE_SEED ?? 0);
  const only = process.env.BENCH_TABLE_ONLY; // e.g. "approach-cow" to run one task's rows
  const outRoot = process.env.BENCH_TABLE_OUT ?? mkdtempSync(path.join(os.tmpdir(), 'rewardsmith-table-'));
  console.log(`method: train() with the default hyperparameters (runner/src/ppo/README.md), ${steps.toLocaleString('en-US')} frames, seed ${seed}, ` +
    `then ${evalEpisodes} held-out evaluation episodes; wall time = training + evaluation; runs in ${outRoot}; ` +
    `load average at start ${loadavg()[0]!.toFixed(1)} (other work on the machine slows every figure)`);
  const rows: { task: string; reward: string; summary: RunSummary }[] = [];
  for (const row of ROWS.filter((r) => !only || r.task === only)) {
    const out = path.join(outRoot, `${row.task}.${row.reward.split('.')[1]}`);
    const summary = await train({ rewardFile: path.join(ROOT, 'runner/rewards', row.reward), task: row.task, steps, seed, evalEpisodes, out, overwrite: true });
    rows.push({ ...row, summary });
    const metrics = readFileSync(path.join(out, RUN_FILES.metrics), 'utf8').trim().split('\n');
    const trainSeconds = (JSON.parse(metrics[metrics.length - 1]!) as UpdateMetrics).wall_seconds;
    console.log(`${row.task} ${row.reward}: success ${(summary.eval.success_rate * 100).toFixed(1)}%; ` +
      `training ${trainSeconds.toFixed(0)} s (${(summary.env_steps / trainSeconds).toFixed(0)} frames/s), training + evaluation ${summary.wall_seconds.toFixed(0)} s`);
  }
  console.log('\n' + resultTable(rows));
  console.log(`load average at end ${loadavg()[0]!.toFixed(1)}`);
  for (const task of new Set(rows.map((r) => r.task))) {
    const dense = rows.find((r) => r.task === task && r.reward.includes('.dense.'))?.summary.eval.success_rate;
    const sparse = rows.find((r) => r.task === task && r.reward.includes('.sparse.'))?.summary.eval.success_rate;
    if (dense === undefined || sparse === undefined) continue;
    const ok = dense >= 0.5 && dense - sparse >= 0.2;
    console.log(`${task}: dense − sparse = ${((dense - sparse) * 100).toFixed(1)} points, dense ${(dense * 100).toFixed(1)}% → ${ok ? 'meets' : 'MISSES'} the target (≥ 20 points, dense ≥ 50%)`);
  }
}
