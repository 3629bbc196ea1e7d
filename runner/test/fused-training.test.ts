// Learning does not change with the engine: the same seed trained on TensorFlow.js (wasm, the reference) and on
// the fused JS network gives the same run up to float rounding. Both start from identical weights and draw from
// one random stream, so the first update sees the same data and its losses agree; afterwards a rounding
// difference can flip a sampled action and the runs drift apart as two seeds would, so the rest of the curve
// and the held-out success are compared within their 95 % intervals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { train } from '../src/runs/train';
import type { UpdateMetrics } from '../src/records';
import { tempDir } from './helpers/tmp';

const ROOT = path.resolve(__dirname, '../..');
const DENSE_TREE = path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts');
/** approach-tree cut to 120-step episodes (a user task file): episodes end while training, and the held-out ones are short. */
const SHORT_TASK = path.join(ROOT, 'runner/test/fixtures/short-approach-tree.yaml');

async function run(backend: 'wasm' | 'js') {
  const out = path.join(tempDir('rewardsmith-engines-'), backend);
  const summary = await train({
    rewardFile: DENSE_TREE,
    task: SHORT_TASK,
    steps: 2048,
    envs: 8,
    seed: 5,
    out,
    workers: 0,
    backend,
    evalEpisodes: 10,
    evalEnvs: 10,
  });
  const curve = readFileSync(path.join(out, 'metrics.ndjson'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as UpdateMetrics);
  return { summary, curve };
}

const overlap = (a: [number, number], b: [number, number]) => a[0] <= b[1] && b[0] <= a[1];

test('the same seed trains alike on TensorFlow.js and on the fused network', { timeout: 600_000 }, async () => {
  const reference = await run('wasm');
  const fused = await run('js');
  assert.equal(reference.summary.backend, 'wasm');
  assert.equal(fused.summary.backend, 'js');
  assert.equal(fused.curve.length, reference.curve.length);
  assert.equal(fused.curve.length, 4);

  // Update 1: the same rollout, so the same losses up to float rounding.
  const [a, b] = [reference.curve[0]!, fused.curve[0]!];
  assert.equal(b.mean_return, a.mean_return);
  for (const key of ['policy_loss', 'value_loss', 'entropy', 'kl'] as const) {
    assert.ok(Math.abs(a[key] - b[key]) <= 1e-4 * Math.max(1, Math.abs(a[key])), `update 1 ${key}: ${a[key]} (tfjs) vs ${b[key]} (fused)`);
  }
  // The whole curve: entropy moves together, and every update's training success intervals overlap.
  reference.curve.forEach((r, i) => {
    const f = fused.curve[i]!;
    assert.ok(Math.abs(r.entropy - f.entropy) < 0.05, `update ${i + 1} entropy ${r.entropy} (tfjs) vs ${f.entropy} (fused)`);
    assert.ok(overlap(r.success.ci95, f.success.ci95), `update ${i + 1} training success ${JSON.stringify(r.success)} vs ${JSON.stringify(f.success)}`);
  });
  // Held-out success over the same 10 worlds.
  const [ra, fa] = [reference.summary.eval.success!, fused.summary.eval.success!];
  assert.equal(fa.n, ra.n);
  assert.ok(overlap(ra.ci95, fa.ci95), `held-out success ${JSON.stringify(ra)} (tfjs) vs ${JSON.stringify(fa)} (fused)`);
});
