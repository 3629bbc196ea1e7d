// A sweep's ranking by the decision rule, over run folders with known held-out counts: a reward ranks below the
// one above only when a reward above it is shown better (not whenever its mean is lower), every reward shows its
// difference to the leader, and one seed's interval reflects its episodes (0 of 10 is not [0, 0]).
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { rateRecord } from '../src/records';
import { resultsMarkdown, sweepResults, type RunRecord } from '../src/sweep/results';
import { compareOverSeeds } from '../src/stats';
import { tempDir } from './helpers/tmp';

const dir = tempDir('sweep-ranking-');
after(() => rmSync(dir, { recursive: true, force: true }));

function run(reward: string, seed: number, count: number, n: number): RunRecord {
  const runDir = path.join(dir, reward, `seed-${seed}`);
  mkdirSync(runDir, { recursive: true });
  const summary = { task: 'approach-tree', train: { frames: 1 }, eval: { episodes: n, success: rateRecord(count, n), death: rateRecord(0, n) } };
  writeFileSync(path.join(runDir, 'summary.json'), JSON.stringify(summary));
  return { reward, rewardFile: `${reward}.reward.ts`, seed, jobId: null, runDir, state: 'completed', wallSeconds: 1, message: null };
}

const counts = (xs: number[]) => xs.map((count) => ({ count, n: 100 }));
const meta = { task: 'approach-tree', steps: 1000, seeds: [7], engine: 'local' as const, wall_seconds: 1 };

test('sweep ranking: one seed each, Newcombe decides; a lower mean that no test separates shares the rank', () => {
  const runs = [run('dense', 7, 26, 100), run('patched', 7, 22, 100), run('sparse', 7, 11, 100), run('broken', 7, 0, 10)];
  const r = sweepResults(
    dir,
    meta,
    runs,
    ['dense', 'patched', 'sparse', 'broken'].map((name) => ({ name, file: `${name}.reward.ts` })),
  );
  const get = (name: string) => r.rewards.find((w) => w.reward === name)!;
  assert.equal(get('dense').rank, 1);
  assert.equal(get('patched').rank, 1, '22 of 100 is not shown worse than 26 of 100');
  assert.equal(get('sparse').rank, 3, 'dense is shown better than 11 of 100: a new rank, at its position');
  assert.equal(get('broken').rank, 4, '0 of 10 is shown worse than 26 of 100 (not than 11 of 100)');
  assert.equal(get('broken').versus_leader?.verdict, 'worse');
  assert.equal(get('dense').versus_leader, null);
  assert.equal(get('sparse').versus_leader?.verdict, 'worse');
  assert.equal(get('patched').versus_leader?.verdict, 'no difference');
  // One seed at 0 of 10: Wilson over its 10 episodes, not a bootstrap that collapses to [0, 0].
  assert.deepEqual(
    get('broken').ci95!.map((x) => Number((100 * x).toFixed(1))),
    [0, 27.8],
  );
  const md = resultsMarkdown(r);
  assert.match(md, /\| 1 \| dense \| 26\.0 \| \[18\.4, 35\.4\] \| leader \|/);
  assert.match(md, /\| 1 \| patched \| 22\.0 \| \[[\d.]+, [\d.]+\] \| −4\.0 pts \[−[\d.]+, \+[\d.]+\] \|/);
  assert.match(md, /\| 3 \| sparse \| 11\.0 \| \[6\.3, 18\.6\] \| −15\.0 pts \[−23\.8, −6\.0\] \|/);
  assert.match(md, /\| 4 \| broken \| 0\.0 \| \[0\.0, 27\.8\] \|/);
  assert.match(md, /difference to the leader \[90 % CI\]/);
});

test('sweep ranking over seeds: a lead from one seed alone does not rank a reward above the others', () => {
  const seeds = [7, 8, 9];
  const runs = [
    ...[40, 45, 38].map((c, i) => run('steady', seeds[i]!, c, 100)),
    ...[85, 22, 19].map((c, i) => run('lucky', seeds[i]!, c, 100)),
    ...[20, 22, 19].map((c, i) => run('sparse3', seeds[i]!, c, 100)),
  ];
  const r = sweepResults(
    dir,
    { ...meta, seeds },
    runs,
    ['steady', 'lucky', 'sparse3'].map((name) => ({ name, file: `${name}.reward.ts` })),
  );
  const get = (name: string) => r.rewards.find((w) => w.reward === name)!;
  assert.equal(get('lucky').rank, 1, 'the best mean (42 %), from one seed …');
  assert.equal(get('steady').rank, 1, '… is not shown better than 41 % on every seed');
  assert.equal(get('lucky').versus_leader, null);
  assert.equal(compareOverSeeds(counts([85, 22, 19]), counts([20, 22, 19])).verdict, 'no difference', 'lucky is not shown better than sparse …');
  assert.equal(get('sparse3').rank, 3, '… but steady is, so sparse ranks below both');
});
