// The one home of the statistics behind every rate the product shows: Wilson score intervals for
// success/death rates over episodes, percentile bootstrap for means over seeds (and episodes), and the
// one text format for a rate with its episode count and interval.

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

/** True when two rate estimates' 95 % intervals do not overlap (a difference worth naming). */
export function intervalsDisjoint(a: { ci95: [number, number] }, b: { ci95: [number, number] }): boolean {
  return a.ci95[1] < b.ci95[0] || b.ci95[1] < a.ci95[0];
}

/** Small deterministic PRNG (mulberry32) so bootstrap intervals are reproducible. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
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

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

/**
 * What the formats read: a RateEstimate, or a rate as run records store it (records.ts RateRecord: rate null,
 * not NaN, when n = 0, since JSON has no NaN). The rate is only read when n > 0.
 */
type ShownRate = { n: number; rate: number | null; ci95: [number, number] };

/** "71.0 % of 100 episodes (95 % CI 61.5–79.0 %)"; "— (no finished episode yet)" when n = 0. */
export function formatRate(e: ShownRate, noun = 'episodes'): string {
  if (e.n === 0 || e.rate === null) return `— (no finished ${noun.replace(/s$/, '')} yet)`;
  return `${pct(e.rate)} of ${e.n} ${e.n === 1 ? noun.replace(/s$/, '') : noun} (95 % CI ${(100 * e.ci95[0]).toFixed(1)}–${pct(e.ci95[1])})`;
}

/** Compact form for tables: "71.0 [61.5, 79.0] (n=100)". */
export function formatRateShort(e: ShownRate): string {
  if (e.n === 0 || e.rate === null) return '—';
  return `${(100 * e.rate).toFixed(1)} [${(100 * e.ci95[0]).toFixed(1)}, ${(100 * e.ci95[1]).toFixed(1)}] (n=${e.n})`;
}
