// The paper's table on this simulator, full size: `rewardsmith table` for approach-tree, approach-cow and
// explore-diamond, seeds 7, 8, 9, the paper's 256,000 frames, 100 held-out worlds per seed and method.
// `npm run bench table`; BENCH_TABLE_TASKS / BENCH_TABLE_SEEDS (comma-separated), BENCH_TABLE_STEPS,
// BENCH_TABLE_EVAL and BENCH_TABLE_OUT (a folder: an interrupted bench resumes there) narrow or move it.
// The cells run as local jobs, one at a time unless BENCH_TABLE_PARALLEL says more (one at a time: each cell's
// wall time is its own, comparable with the figures measured before the table ran its cells as jobs).
import { mkdtempSync } from 'node:fs';
import os, { loadavg } from 'node:os';
import path from 'node:path';
import { runTable, tableMarkdown, TABLE_TASKS, DEFAULT_SEEDS } from '../src/table/table';
import { DEFAULT_STEPS } from '../src/runs/config';
import { LocalEngine } from '../src/sweep/engine';

const list = (v: string | undefined) =>
  v
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

export async function run(): Promise<void> {
  const tasks = list(process.env.BENCH_TABLE_TASKS) ?? [...TABLE_TASKS];
  const seeds = list(process.env.BENCH_TABLE_SEEDS)?.map(Number) ?? DEFAULT_SEEDS;
  const steps = Number(process.env.BENCH_TABLE_STEPS ?? DEFAULT_STEPS);
  const evalEpisodes = Number(process.env.BENCH_TABLE_EVAL ?? 100);
  const out = process.env.BENCH_TABLE_OUT ?? mkdtempSync(path.join(os.tmpdir(), 'rewardsmith-table-'));
  console.log(
    `method: rewardsmith table (pretrain → foundation; train --init with the bundled sparse and dense rewards), tasks ${tasks.join(', ')}, ` +
      `seeds ${seeds.join(', ')}, ${steps.toLocaleString('en-US')} frames, ${evalEpisodes} held-out episodes per seed and method; runs in ${out}; ` +
      `load average at start ${loadavg()[0]!.toFixed(1)} (other work on the machine slows every figure)`,
  );
  const engine = new LocalEngine({ parallel: Number(process.env.BENCH_TABLE_PARALLEL ?? 1) });
  const result = await runTable({ out, tasks, seeds, steps, evalEpisodes, engine, log: (line) => console.log(`  ${line}`) });
  console.log('\n' + tableMarkdown(result));
  console.log(`load average at end ${loadavg()[0]!.toFixed(1)}`);
}
