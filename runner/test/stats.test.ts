import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bootstrapMean,
  compareOverSeeds,
  compareRates,
  formatDifference,
  formatRate,
  levelText,
  mulberry32,
  normalQuantile,
  rateOverSeeds,
  wilson,
} from '../src/stats';

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

const near = (x: number, want: number, tol: number, what: string) => assert.ok(Math.abs(x - want) < tol, `${what}: ${x}, want ${want}`);

test('normal quantile: the z values the intervals use', () => {
  near(normalQuantile(0.975), 1.959964, 1e-6, 'z 97.5 %');
  near(normalQuantile(0.95), 1.644854, 1e-6, 'z 95 %');
  near(normalQuantile(1 - 0.05 / 3), 2.128045, 1e-6, 'z 1 − 5 %/3');
  near(normalQuantile(0.001), -3.090232, 1e-6, 'lower tail');
  near(normalQuantile(0.5), 0, 1e-12, 'median');
});

test("difference of two rates: Newcombe's hybrid score interval reproduces his published worked examples", () => {
  // Newcombe (1998), Statistics in Medicine 17:873-890, Table II, method 10, 95 % intervals (alpha 2.5 % each side).
  const cases: [number, number, number, number, number, number][] = [
    [56, 70, 48, 80, 0.0524, 0.3339],
    [9, 10, 3, 10, 0.1705, 0.809],
    [5, 56, 0, 29, -0.0381, 0.1926],
  ];
  for (const [a, n1, b, n2, lo, hi] of cases) {
    const c = compareRates({ count: a, n: n1 }, { count: b, n: n2 }, 0.025);
    near(c.ci[0], lo, 1e-4, `${a}/${n1} − ${b}/${n2} lower`);
    near(c.ci[1], hi, 1e-4, `${a}/${n1} − ${b}/${n2} upper`);
    assert.equal(c.level, 0.95);
  }
});

test('the decision: one-sided at 5 %, from the 90 % interval of the difference', () => {
  // A reward that took a policy from 11 of 100 to 26 of 100 is better (z-test p ≈ 0.003 one-sided), although
  // the two 95 % Wilson intervals overlap, which the old rule read as no difference.
  const better = compareRates({ count: 26, n: 100 }, { count: 11, n: 100 });
  assert.equal(better.verdict, 'better');
  assert.ok(wilson(26, 100).ci95[0] < wilson(11, 100).ci95[1], 'the 95 % intervals overlap: the old rule would have thrown it away');
  assert.equal(formatDifference(better), '+15.0 pts [+6.0, +23.8] (90 % CI)');
  // 26 vs 22 of 100 is noise at this n; the mirrored comparison is "worse" only when the interval excludes 0.
  assert.equal(compareRates({ count: 26, n: 100 }, { count: 22, n: 100 }).verdict, 'no difference');
  assert.equal(compareRates({ count: 22, n: 100 }, { count: 26, n: 100 }).verdict, 'no difference');
  assert.equal(compareRates({ count: 11, n: 100 }, { count: 26, n: 100 }).verdict, 'worse');
  assert.equal(formatDifference(compareRates({ count: 11, n: 100 }, { count: 22, n: 100 })), '−11.0 pts [−19.6, −2.3] (90 % CI)');
  // The same difference over more episodes is decided; at 0 % and 100 % the interval stays inside [−1, 1].
  assert.equal(compareRates({ count: 78, n: 300 }, { count: 66, n: 300 }).verdict, 'no difference');
  assert.equal(compareRates({ count: 260, n: 1000 }, { count: 220, n: 1000 }).verdict, 'better');
  const extreme = compareRates({ count: 10, n: 10 }, { count: 0, n: 10 });
  assert.equal(extreme.verdict, 'better');
  assert.ok(extreme.ci[0] > 0.5 && extreme.ci[1] === 1);
  assert.equal(compareRates({ count: 0, n: 10 }, { count: 0, n: 10 }).verdict, 'no difference');
  assert.equal(formatDifference(compareRates({ count: 0, n: 0 }, { count: 1, n: 10 })), '—');
});

test('the decision holds its error rate: under no difference, "better" comes up about alpha of the time', () => {
  // 4,000 synthetic comparisons of two rewards with the same true success (25 %), 100 episodes each.
  const rand = mulberry32(99);
  const binomial = (n: number, p: number) => Array.from({ length: n }, rand).filter((u) => u < p).length;
  let better = 0;
  const trials = 4000;
  for (let t = 0; t < trials; t++)
    if (compareRates({ count: binomial(100, 0.25), n: 100 }, { count: binomial(100, 0.25), n: 100 }).verdict === 'better') better++;
  assert.ok(better / trials > 0.03 && better / trials < 0.06, `false "better" rate ${better / trials}`);
});

test('levels as text', () => {
  assert.equal(levelText(0.9), '90 %');
  assert.equal(levelText(1 - 2 * (0.05 / 3)), '96.7 %');
});

test('success over seeds: one seed is its Wilson interval (0 of 10 is not [0, 0]); several never narrower than the pooled episodes', () => {
  const one = rateOverSeeds([{ count: 0, n: 10 }]);
  assert.equal(one.mean, 0);
  assert.equal(one.ci95[0], 0);
  near(one.ci95[1], wilson(0, 10).ci95[1], 1e-12, 'upper bound of 0 of 10');
  assert.ok(one.ci95[1] > 0.27);
  const zeros = rateOverSeeds([
    { count: 0, n: 10 },
    { count: 0, n: 10 },
  ]);
  near(zeros.ci95[1], wilson(0, 20).ci95[1], 1e-12, 'two seeds at 0 of 10');
  const spread = rateOverSeeds([
    { count: 90, n: 100 },
    { count: 10, n: 100 },
  ]);
  assert.ok(spread.ci95[1] - spread.ci95[0] > wilson(100, 200).ci95[1] - wilson(100, 200).ci95[0], 'seed spread widens it');
});

test('difference over seeds: one seed each is Newcombe; seed spread widens the interval and can undo a decision', () => {
  const a = [{ count: 26, n: 100 }];
  const b = [{ count: 11, n: 100 }];
  assert.deepEqual(compareOverSeeds(a, b), compareRates(a[0]!, b[0]!));
  // Dense ahead on every seed by ~20 points: better.
  const dense = [
    { count: 40, n: 100 },
    { count: 45, n: 100 },
    { count: 38, n: 100 },
  ];
  const sparse = [
    { count: 20, n: 100 },
    { count: 22, n: 100 },
    { count: 19, n: 100 },
  ];
  assert.equal(compareOverSeeds(dense, sparse).verdict, 'better');
  // The same mean gap from one seed that went far ahead and two that did not: not shown better.
  const uneven = [
    { count: 82, n: 100 },
    { count: 22, n: 100 },
    { count: 19, n: 100 },
  ];
  const c = compareOverSeeds(uneven, sparse);
  assert.equal(c.verdict, 'no difference', formatDifference(c));
  assert.ok(compareRates({ count: 123, n: 300 }, { count: 61, n: 300 }).verdict === 'better', 'pooling the episodes would have hidden the seeds');
});
