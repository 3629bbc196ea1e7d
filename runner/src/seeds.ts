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
