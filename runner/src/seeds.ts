// Seeds: the integer hash that world generation, the simulator's random streams and the run's seed streams
// share, and the per-env stream of episode seeds. It sits below env, ppo and runs so that a training run
// or an evaluation can derive the same seeds as the environments without importing the simulator.

/** 32-bit integer hash of up to four integers; identical results on every platform. */
export function hash32(a: number, b = 0, c = 0, d = 0): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be59b, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) ^ Math.imul(c + 0x7f4a7c15, 0x297a2d39);
  h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) ^ Math.imul(d + 0x165667b1, 0x27d4eb2f);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Seed of env `index`'s next episode after an episode on `seed`: a fixed per-env stream. */
export const nextEpisodeSeed = (seed: number, index: number) => hash32(seed, index, 0x5eed);

/**
 * The one PRNG (mulberry32): a 32-bit state advanced by a constant, then mixed. Small, fast, and the same
 * on every platform; the simulator's, world generation's, the random rollout's and the bootstrap's random
 * draws are all this stream. `skip(n)` jumps over n draws without computing them (each draw adds the same
 * constant to the state). Seeds are integers (any, signed or not: only their low 32 bits count).
 */
export class Mulberry32 {
  protected s: number;
  constructor(seed: number) {
    this.s = seed | 0;
  }
  /** The next draw as a 32-bit unsigned integer. */
  nextUint32(): number {
    this.s = (this.s + 0x6d2b79f5) | 0;
    let t = Math.imul(this.s ^ (this.s >>> 15), 1 | this.s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }
  /** Advances the stream past `n` draws. */
  skip(n: number): void {
    this.s = (this.s + Math.imul(n, 0x6d2b79f5)) | 0;
  }
}
