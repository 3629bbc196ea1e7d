// The one home of the statistics behind every rate the product shows: Wilson score intervals for
// success/death rates over episodes, percentile bootstrap for means over seeds (and episodes), and the
// one text format for a rate with its episode count and interval.
import { Mulberry32 } from './seeds';

export interface RateEstimate {
  /** Successes (or deaths, …) counted. */
  count: number;
  /** Episodes the rate is over. */
  n: number;
  /** count / n; NaN when n = 0 (no estimate, shown as "—"). */
  rate: number;
  /** 95 % interval [lo, hi]; [0, 1] when n = 0. */
  ci95: [number, number];
}

/** Wilson score interval (95 % unless z is given): well-behaved at 0 %, 100 % and small n. */
export function wilson(count: number, n: number, z = 1.959963984540054): RateEstimate {
  if (!(n > 0)) return { count: 0, n: 0, rate: Number.NaN, ci95: [0, 1] };
  const p = count / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  // At 0 of n (n of n) the bound is exactly 0 (1); rounding would otherwise put the rate outside its own interval.
  return { count, n, rate: p, ci95: [count === 0 ? 0 : Math.max(0, centre - half), count === n ? 1 : Math.min(1, centre + half)] };
}

/**
 * The standard normal quantile (inverse CDF) for 0 < p < 1: Acklam's rational approximation (relative error
 * below 1.2e-9), enough for interval bounds shown to 0.1 points.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/** Counts behind a rate: `count` successes of `n` episodes (a RateEstimate or a stored RateRecord). */
export type Counts = { count: number; n: number };

/**
 * The difference of two rates (a − b) with its interval and the one-sided decision at `alpha` it supports:
 * the interval is two-sided at level 1 − 2·alpha, so "better" (lower bound above 0) is a one-sided test at
 * alpha and "worse" (upper bound below 0) the mirrored one. The one decision rule behind `loop`, `sweep`'s
 * ranking and `table`'s comparisons.
 */
export interface RateComparison {
  /** rate(a) − rate(b); NaN when either has no episodes. */
  difference: number;
  /** Two-sided interval of the difference at `level`. */
  ci: [number, number];
  /** 1 − 2·alpha, e.g. 0.90 for a one-sided test at 5 %. */
  level: number;
  /** One-sided error rate of each verdict. */
  alpha: number;
  verdict: 'better' | 'worse' | 'no difference';
  /** Episodes behind each side. */
  n: [number, number];
}

/** One-sided significance of the decisions the product makes (5 %). */
export const DECISION_ALPHA = 0.05;

const verdictOf = (ci: [number, number]): RateComparison['verdict'] => (ci[0] > 0 ? 'better' : ci[1] < 0 ? 'worse' : 'no difference');

/**
 * Newcombe's hybrid score interval for the difference of two independent proportions (Newcombe 1998,
 * "Interval estimation for the difference between independent proportions", method 10): from the Wilson
 * intervals (L1, U1) of a and (L2, U2) of b at the same level, δ − √((p1−L1)² + (U2−p2)²) to
 * δ + √((U1−p1)² + (p2−L2)²). Good coverage at small n and near 0 % or 100 %, where the Wald interval fails.
 */
export function compareRates(a: Counts, b: Counts, alpha = DECISION_ALPHA): RateComparison {
  const level = 1 - 2 * alpha;
  if (!(a.n > 0 && b.n > 0)) return { difference: Number.NaN, ci: [-1, 1], level, alpha, verdict: 'no difference', n: [a.n, b.n] };
  const z = normalQuantile(1 - alpha);
  const A = wilson(a.count, a.n, z);
  const B = wilson(b.count, b.n, z);
  const difference = A.rate - B.rate;
  const lo = difference - Math.hypot(A.rate - A.ci95[0], B.ci95[1] - B.rate);
  const hi = difference + Math.hypot(A.ci95[1] - A.rate, B.rate - B.ci95[0]);
  const ci: [number, number] = [Math.max(-1, lo), Math.min(1, hi)];
  return { difference, ci, level, alpha, verdict: verdictOf(ci), n: [a.n, b.n] };
}

/**
 * Success over several runs (seeds) of one reward: the mean of the seeds' rates with an interval that reflects
 * the episodes behind it. One seed: its Wilson interval. Several: the percentile bootstrap over seeds and
 * episodes (bootstrapMean), widened where needed to the Wilson interval of all episodes pooled, because
 * seed-to-seed variation can only add to the binomial spread: 0 of 10 on one seed is [0, 27.8] %, never [0, 0].
 */
export function rateOverSeeds(runs: readonly Counts[]): BootstrapEstimate {
  const done = runs.filter((r) => r.n > 0);
  const n = done.reduce((s, r) => s + r.n, 0);
  if (done.length === 0) return { mean: Number.NaN, ci95: [Number.NaN, Number.NaN], groups: 0, n: 0 };
  const pooled = wilson(
    done.reduce((s, r) => s + r.count, 0),
    n,
  );
  if (done.length === 1) return { mean: pooled.rate, ci95: pooled.ci95, groups: 1, n };
  const boot = bootstrapMean(done.map(outcomes));
  return { ...boot, ci95: [Math.min(boot.ci95[0], pooled.ci95[0]), Math.max(boot.ci95[1], pooled.ci95[1])] };
}

/**
 * The difference of two rewards' success over seeds (mean of a's seed rates − mean of b's), with the decision
 * rule of compareRates. One seed each: Newcombe's interval. Several: the percentile bootstrap of the difference
 * (seeds, then episodes within each seed, resampled for each side), widened where needed to Newcombe's
 * interval over the pooled episodes, as rateOverSeeds does for one rate.
 */
export function compareOverSeeds(
  a: readonly Counts[],
  b: readonly Counts[],
  alpha = DECISION_ALPHA,
  opts: { resamples?: number; seed?: number } = {},
): RateComparison {
  const A = a.filter((r) => r.n > 0);
  const B = b.filter((r) => r.n > 0);
  const sum = (rs: Counts[]) => ({ count: rs.reduce((s, r) => s + r.count, 0), n: rs.reduce((s, r) => s + r.n, 0) });
  const pooled = compareRates(sum(A), sum(B), alpha);
  if (A.length <= 1 && B.length <= 1) return pooled;
  const mean = (rs: Counts[]) => rs.reduce((s, r) => s + r.count / r.n, 0) / rs.length;
  const resamples = opts.resamples ?? 2000;
  const rand = mulberry32(opts.seed ?? 12345);
  // A resampled seed's rate: its episodes drawn with replacement, i.e. a binomial draw at its observed rate.
  const draw = (rs: Counts[]) => {
    let total = 0;
    for (let k = 0; k < rs.length; k++) {
      const r = rs[Math.floor(rand() * rs.length)]!;
      const p = r.count / r.n;
      let s = 0;
      for (let i = 0; i < r.n; i++) if (rand() < p) s++;
      total += s / r.n;
    }
    return total / rs.length;
  };
  const stats = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++) stats[i] = draw(A) - draw(B);
  stats.sort();
  const at = (q: number) => stats[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))]!;
  const ci: [number, number] = [Math.min(at(alpha), pooled.ci[0]), Math.max(at(1 - alpha), pooled.ci[1])];
  return { ...pooled, difference: mean(A) - mean(B), ci, verdict: verdictOf(ci) };
}

const outcomes = (r: Counts) => Array.from({ length: r.n }, (_, i) => (i < r.count ? 1 : 0));

const signedPts = (x: number) => `${x < 0 ? '−' : '+'}${Math.abs(100 * x).toFixed(1)}`;

/** "+15.0 pts [−0.2, +29.4] (90 % CI)"; "—" when either side has no episodes. */
export function formatDifference(c: RateComparison): string {
  if (Number.isNaN(c.difference)) return '—';
  return `${signedPts(c.difference)} pts [${signedPts(c.ci[0])}, ${signedPts(c.ci[1])}] (${levelText(c.level)} CI)`;
}

/** 0.9 → "90 %", 0.9667 → "96.7 %". */
export function levelText(level: number): string {
  const p = 100 * level;
  return `${Number.isInteger(Math.round(p * 10) / 10) ? p.toFixed(0) : p.toFixed(1)} %`;
}

/** The one PRNG (seeds.ts) as a function, so bootstrap intervals are reproducible. */
export function mulberry32(seed: number): () => number {
  const stream = new Mulberry32(seed >>> 0);
  return () => stream.next();
}

export interface BootstrapEstimate {
  mean: number;
  ci95: [number, number];
  /** Number of groups (seeds) and of values (episodes) behind the estimate. */
  groups: number;
  n: number;
}

/**
 * Mean and percentile-bootstrap 95 % interval over groups of values (e.g. seeds × episode outcomes):
 * each resample draws groups with replacement, then values within each drawn group with replacement,
 * so the interval covers seed-to-seed and episode-to-episode variation. The mean is the mean of the
 * group means (each seed weighs the same).
 */
export function bootstrapMean(groups: readonly (readonly number[])[], opts: { resamples?: number; seed?: number } = {}): BootstrapEstimate {
  const nonEmpty = groups.filter((g) => g.length > 0);
  const n = nonEmpty.reduce((s, g) => s + g.length, 0);
  if (nonEmpty.length === 0) return { mean: Number.NaN, ci95: [Number.NaN, Number.NaN], groups: 0, n: 0 };
  const groupMean = (g: readonly number[]) => g.reduce((s, v) => s + v, 0) / g.length;
  const mean = nonEmpty.reduce((s, g) => s + groupMean(g), 0) / nonEmpty.length;
  const resamples = opts.resamples ?? 2000;
  const rand = mulberry32(opts.seed ?? 12345);
  const stats = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let total = 0;
    for (let k = 0; k < nonEmpty.length; k++) {
      const g = nonEmpty[Math.floor(rand() * nonEmpty.length)]!;
      let s = 0;
      for (let i = 0; i < g.length; i++) s += g[Math.floor(rand() * g.length)]!;
      total += s / g.length;
    }
    stats[r] = total / nonEmpty.length;
  }
  stats.sort();
  const at = (q: number) => stats[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))]!;
  return { mean, ci95: [at(0.025), at(0.975)], groups: nonEmpty.length, n };
}

/** A share as a percentage with one decimal, without the sign ("71.0"): for tables whose header says %. */
export const percent = (x: number) => (100 * x).toFixed(1);
/** A share as a percentage with its unit: one decimal ("71.0 %"), or `digits` 0 for a share in prose ("71 %"). */
export const percentText = (x: number, digits = 1) => `${(100 * x).toFixed(digits)} %`;
const pct = (x: number) => percentText(x);

/**
 * What the formats read: a RateEstimate, or a rate as run records store it (records.ts RateRecord: rate null,
 * not NaN, when n = 0, since JSON has no NaN). The rate is only read when n > 0.
 */
type ShownRate = { n: number; rate: number | null; ci95: [number, number] };

/** "71.0 % of 100 episodes (95 % CI 61.5–79.0 %)"; "— (no finished episode yet)" when n = 0. */
export function formatRate(e: ShownRate, noun = 'episodes'): string {
  if (e.n === 0 || e.rate === null) return `— (no finished ${noun.replace(/s$/, '')} yet)`;
  return `${pct(e.rate)} of ${e.n} ${e.n === 1 ? noun.replace(/s$/, '') : noun} (95 % CI ${percent(e.ci95[0])}–${pct(e.ci95[1])})`;
}

/** Compact form for tables: "71.0 [61.5, 79.0] (n=100)". */
export function formatRateShort(e: ShownRate): string {
  if (e.n === 0 || e.rate === null) return '—';
  return `${percent(e.rate)} [${percent(e.ci95[0])}, ${percent(e.ci95[1])}] (n=${e.n})`;
}
