import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapMean, formatRate, intervalsDisjoint, wilson } from '../src/stats';

test('Wilson interval: textbook values, sane at 0 and n', () => {
  const e = wilson(71, 100);
  assert.equal(e.rate, 0.71);
  assert.ok(Math.abs(e.ci95[0] - 0.6146) < 1e-3 && Math.abs(e.ci95[1] - 0.7898) < 1e-3, String(e.ci95));
  const zero = wilson(0, 20);
  assert.equal(zero.ci95[0], 0);
  assert.ok(zero.ci95[1] > 0.15 && zero.ci95[1] < 0.17);
  const all = wilson(2, 2);
  assert.ok(all.ci95[0] < 0.35, 'two successes out of two is no evidence of 100 %');
  assert.ok(Number.isNaN(wilson(0, 0).rate));
  // The interval contains its rate at the extremes for every n (0 of 6 gave a lower bound of 2.8e-17 > 0).
  for (let n = 1; n <= 200; n++) {
    assert.equal(wilson(0, n).ci95[0], 0, `0 of ${n}`);
    assert.equal(wilson(n, n).ci95[1], 1, `${n} of ${n}`);
  }
});

test('a rate is always shown with its episode count and interval, and "—" without episodes', () => {
  assert.equal(formatRate(wilson(71, 100)), '71.0 % of 100 episodes (95 % CI 61.5–79.0 %)');
  assert.match(formatRate(wilson(0, 0)), /^— /);
});

test('generalisation gap: disjoint intervals are named, overlapping ones are not', () => {
  assert.ok(intervalsDisjoint(wilson(30, 100), wilson(1, 100)));
  assert.ok(!intervalsDisjoint(wilson(30, 100), wilson(25, 100)));
});

test('bootstrap over seeds and episodes: mean of seed means, interval widens with seed spread', () => {
  const tight = bootstrapMean([
    [1, 1, 0, 1],
    [1, 0, 1, 1],
    [1, 1, 1, 0],
  ]);
  const spread = bootstrapMean([
    [1, 1, 1, 1],
    [0, 0, 0, 0],
    [1, 1, 1, 1],
  ]);
  assert.ok(Math.abs(tight.mean - 0.75) < 1e-9);
  assert.ok(tight.ci95[0] <= 0.75 && tight.ci95[1] >= 0.75);
  assert.ok(spread.ci95[1] - spread.ci95[0] > tight.ci95[1] - tight.ci95[0]);
  assert.deepEqual(bootstrapMean([[1, 0]], { seed: 3 }), bootstrapMean([[1, 0]], { seed: 3 }));
});
