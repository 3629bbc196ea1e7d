// Training success must estimate what held-out evaluation measures: the chance that an episode succeeds. On
// approach-tree with a weak reward, successes are short (the agent spawns near a tree) and failures run the
// full 2,000 steps, so "the last 100 finished episodes" showed ~30 % while evaluation gave 1 %.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generalisationGap, TrainingSuccess } from '../src/runs/training-success';
import { rateRecord } from '../src/records';
import { mulberry32 } from '../src/stats';

/**
 * 32 envs for 256,000 frames; an episode succeeds with probability p within `short` steps, else times out after
 * 2,000 steps. Returns both curves (new estimate, and the old "last 100 finished") at every 2,048 frames.
 */
function simulate(p: number, short: number, seed: number) {
  const envs = 32,
    maxSteps = 2000,
    frames = 256_000;
  const rand = mulberry32(seed);
  const curve = new TrainingSuccess(envs);
  const finished: boolean[] = []; // in order of ending: what the old curve counted
  const remaining: number[] = [];
  const outcome: boolean[] = [];
  const draw = (i: number) => {
    outcome[i] = rand() < p;
    remaining[i] = outcome[i] ? 1 + Math.floor(rand() * short) : maxSteps;
  };
  for (let i = 0; i < envs; i++) draw(i);
  const points: { frame: number; estimate: ReturnType<TrainingSuccess['estimate']>; lastFinished: number | null }[] = [];
  for (let frame = 0; frame < frames; frame += envs) {
    for (let i = 0; i < envs; i++) {
      if (--remaining[i]! > 0) continue;
      curve.end(i, frame + envs, outcome[i]!, outcome[i]! ? 1 : 0);
      finished.push(outcome[i]!);
      draw(i);
    }
    if ((frame + envs) % 2048 === 0) {
      const last = finished.slice(-100);
      points.push({ frame: frame + envs, estimate: curve.estimate(), lastFinished: last.length ? last.filter(Boolean).length / last.length : null });
    }
  }
  return points;
}

test('training success: short successes do not inflate the curve (the last-finished window did)', () => {
  for (const seed of [1, 2, 3]) {
    const points = simulate(0.05, 300, seed);
    // The first quarter of the paper's budget: only short episodes can have finished yet.
    const early = points.filter((p) => p.frame <= 60_000 && p.lastFinished !== null);
    assert.ok(early.length > 0 && early.every((p) => p.lastFinished === 1), 'the old curve showed 100 % success for a 5 % policy');
    assert.ok(
      early.every((p) => p.estimate.n === 0 && p.estimate.rate === null),
      'no estimate before a window of started episodes has ended',
    );
    for (const p of points.filter((q) => q.estimate.n > 0)) {
      assert.ok(
        p.estimate.ci95[0] <= 0.05 + 1e-9 || p.estimate.n < 20,
        `frame ${p.frame}: interval ${p.estimate.ci95} (n ${p.estimate.n}) is not above the true 5 %`,
      );
    }
    const end = points[points.length - 1]!.estimate;
    assert.ok(end.n >= 50, `enough episodes behind the final estimate (${end.n})`);
    assert.ok(end.ci95[0] <= 0.05 && 0.05 <= end.ci95[1], `final 95 % interval ${end.ci95} covers the true 5 % (n ${end.n})`);
  }
});

test('training success: no estimate until every episode of a window has ended, then the started window', () => {
  const curve = new TrainingSuccess(2);
  curve.end(0, 100, true, 1); // env 0: a short success; env 1 still running since frame 0
  assert.equal(curve.estimate().n, 0);
  assert.equal(curve.estimate().rate, null);
  curve.end(0, 200, true, 1);
  curve.end(1, 2000, false, 0); // env 1's long failure ends: everything started before frame 200 has ended
  const e = curve.estimate();
  assert.deepEqual([e.count, e.n], [2, 3], 'the episodes that started at 0, 0 and 100');
  assert.equal(e.started_from_frame, 0);
  assert.equal(e.started_to_frame, 200);
  assert.ok(e.ci95[0] < e.rate! && e.rate! < e.ci95[1]);
});

test('training success: the state round-trips (resume continues the same estimate)', () => {
  const a = new TrainingSuccess(3, 10);
  for (let f = 1; f < 60; f++) a.end(f % 3, f * 10, f % 4 === 0, f);
  const b = new TrainingSuccess(3, 10, JSON.parse(JSON.stringify(a.state())));
  a.end(1, 700, true, 1);
  b.end(1, 700, true, 1);
  assert.deepEqual(b.estimate(), a.estimate());
  assert.ok(a.estimate().n >= 10 && a.estimate().n <= 12, 'about the window size');
});

test('generalisation gap: named when the interval of the difference excludes 0, though the two intervals overlap', () => {
  // 26 % in training, 11 % held-out (100 episodes each): the 95 % Wilson intervals overlap ([18.4, 35.4] and
  // [6.3, 18.6]), the 95 % interval of the difference does not contain 0.
  const gap = generalisationGap(rateRecord(26, 100), rateRecord(11, 100));
  assert.match(
    gap?.message ?? '',
    /^Generalisation gap: held-out success 11\.0 % of 100 episodes .* is lower than training success 26\.0 % of 100 episodes .*: −15\.0 pts \[−[\d.]+, −[\d.]+\] \(95 % CI\)\.$/,
  );
  assert.equal(generalisationGap(rateRecord(26, 100), rateRecord(22, 100)), null, 'a 4-point difference on 100 episodes is noise');
  assert.match(generalisationGap(rateRecord(5, 100), rateRecord(20, 100))?.message ?? '', /is higher than training success/);
  assert.equal(generalisationGap(rateRecord(0, 0), rateRecord(20, 100)), null, 'no training figure, no gap');
  // explore-diamond trains on 2,000-step episodes and is held out on 60,000-step ones: its held-out success is
  // higher for that alone, and the warning says so instead of calling it a generalisation gap.
  const cut = generalisationGap(rateRecord(3, 100), rateRecord(5, 30), { train: 2000, heldOut: 60000 });
  assert.match(
    cut?.message ?? '',
    /^Not a generalisation gap: training episodes ended at 2,000 steps and held-out ones at 60,000, so held-out success 16\.7 % of 30 episodes .* is higher than training success 3\.0 % of 100 episodes/,
  );
  assert.match(generalisationGap(rateRecord(26, 100), rateRecord(11, 100), { train: 2000, heldOut: 2000 })?.message ?? '', /^Generalisation gap:/);
});
