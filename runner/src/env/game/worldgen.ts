// Deterministic world generation from a seed, after Minecraft 1.16.5's own worldgen: the features, decorators,
// carvers and chunk-generation spawns of the plains biome (decompiled 1.16.5 sources:
// net.minecraft.data.worldgen.Features, BiomeDefaultFeatures, VanillaBiomes.plainsBiome, Carvers,
// net.minecraft.world.level.levelgen.feature.*, .carver.*, NaturalSpawner), re-implemented on our own
// per-feature random streams (the numbers differ from a real seed's, the distributions are the game's).
// Every function here is pure in (kind, seed, options, coordinates), so the simulator (which generates 16×16
// chunk columns lazily) and the mineflayer backend's flying-squid generator produce the same world:
// `generateChunk(kind, seed, cx, cz)` fills one chunk column of block state ids for the stored height band,
// and `blockStateAt(kind, seed, x, y, z)` answers any single coordinate (outside the band it returns the
// band's fill: stone below/above underground, air above plains).
import { LAVA_BLOCK, MOB_MAX_HEALTH, PLAINS_MOBS, S, WATER_BLOCK, stateToBlock, type PlainsMob } from './registry';
import { VANILLA_WORLD, type WorldKind, type WorldOptions } from '../../tasks';
import { Mulberry32, hash32 } from '../../seeds';

/** The height band each world kind stores: y in [minY, minY + height). */
export const WORLD_BANDS: Readonly<Record<WorldKind, { minY: number; height: number; below: number; above: number }>> = {
  plains: { minY: 48, height: 48, below: S.stone, above: S.air },
  underground: { minY: 0, height: 48, below: S.bedrock, above: S.stone },
};

export const CHUNK_CELLS = (kind: WorldKind) => 16 * 16 * WORLD_BANDS[kind].height;
/** Index of (local x, y - minY, local z) in a chunk column array. */
export const cellIndex = (lx: number, yy: number, lz: number) => (yy * 16 + lz) * 16 + lx;

// ---- hashing, random streams and noise (integer hashing; identical results on every platform) ----

/** Uniform in [0, 1). */
export const rand01 = (a: number, b = 0, c = 0, d = 0) => hash32(a, b, c, d) / 4294967296;

/** The one PRNG (seeds.ts) with java.util.Random's call shapes, so feature code reads like the game's. */
export class Stream extends Mulberry32 {
  nextFloat(): number {
    return this.nextUint32() / 4294967296;
  }
  nextDouble(): number {
    return this.nextFloat();
  }
  /** Uniform integer in [0, n); n ≤ 0 gives 0. */
  nextInt(n: number): number {
    return n <= 0 ? 0 : Math.floor(this.nextFloat() * n);
  }
  /** A seed for a child stream (the game's `random.nextLong()` seeding a sub-feature). */
  nextSeed(): number {
    return hash32(Math.floor(this.nextFloat() * 4294967296), 0x5eed);
  }
}
/** The stream of one feature instance: (world seed, salt, chunk, index). */
const stream = (seed: number, salt: number, cx: number, cz: number, i = 0) => new Stream(hash32(seed + salt * 0x1000193, cx, cz, i));

const smooth = (t: number) => t * t * (3 - 2 * t);
/** 2D value noise in [-1, 1] with lattice spacing `scale`. */
function noise2(seed: number, x: number, z: number, scale: number): number {
  const fx = x / scale,
    fz = z / scale;
  const ix = Math.floor(fx),
    iz = Math.floor(fz);
  const tx = smooth(fx - ix),
    tz = smooth(fz - iz);
  const a = rand01(seed, ix, iz),
    b = rand01(seed, ix + 1, iz);
  const c = rand01(seed, ix, iz + 1),
    d = rand01(seed, ix + 1, iz + 1);
  return (a + (b - a) * tx + (c - a) * tz + (a - b - c + d) * tx * tz) * 2 - 1;
}
// Salts so that different features draw independent numbers from one seed.
const SALT = {
  height: 11,
  detail: 12,
  tallGrass: 13,
  tree: 14,
  spawn: 15,
  mobs: 16,
  bedrock: 17,
  flowers: 18,
  grass: 19,
  biomeInfo: 20,
  ore: 21,
  cave: 22,
  canyon: 23,
  lake: 24,
  spring: 25,
};

/** Vanilla counts scaled by a density multiplier: the integer part always, the fraction as a chance. */
function scaledCount(r: Stream, vanilla: number, multiplier: number): number {
  const n = vanilla * multiplier;
  const whole = Math.floor(n);
  return whole + (r.nextFloat() < n - whole ? 1 : 0);
}

// ---- plains ----

/** Height of the grass surface (the grass_block's y) of plains at column (x, z): gentle, about 62..67. */
export function plainsSurfaceY(seed: number, x: number, z: number): number {
  return 64 + Math.floor(2.6 * noise2(seed + SALT.height, x, z, 40) + 0.9 * noise2(seed + SALT.detail, x, z, 11));
}
/** The y range plants can stand at: one above the surface grass, whose y is 64 + ⌊2.6·n + 0.9·m⌋ with n, m in [−1, 1) (60..67), so 61..68. */
const PLANT_MIN_Y = 64 + Math.floor(-2.6 - 0.9) + 1,
  PLANT_MAX_Y = 64 + Math.floor(2.6 + 0.9) + 1;

/**
 * Biome.BIOME_INFO_NOISE at (x / 200, z / 200): decides between the sparse and the rich flower/grass counts
 * (COUNT_NOISE) and the plains flower palette (PlainFlowerProvider). Value noise here, not the game's simplex.
 */
const biomeInfoNoise = (seed: number, x: number, z: number) => noise2(seed + SALT.biomeInfo, x, z, 200);

/** PlainFlowerProvider: below −0.8 the four tulips, else poppy/azure bluet/oxeye daisy/cornflower (2/3) or dandelion (1/3). */
const LOW_NOISE_FLOWERS = [S.orange_tulip, S.red_tulip, S.pink_tulip, S.white_tulip];
const HIGH_NOISE_FLOWERS = [S.poppy, S.azure_bluet, S.oxeye_daisy, S.cornflower];
export const PLAINS_FLOWERS: readonly number[] = [...LOW_NOISE_FLOWERS, ...HIGH_NOISE_FLOWERS, S.dandelion];
function plainFlower(seed: number, r: Stream, x: number, z: number): number {
  if (biomeInfoNoise(seed, x, z) < -0.8) return LOW_NOISE_FLOWERS[r.nextInt(4)]!;
  return r.nextInt(3) > 0 ? HIGH_NOISE_FLOWERS[r.nextInt(4)]! : S.dandelion;
}

// Plains vegetation, in the order VanillaBiomes.plainsBiome adds it: addPlainGrass (PATCH_TALL_GRASS_2), then
// addPlainVegetation (PLAIN_VEGETATION trees, FLOWER_PLAIN_DECORATED, PATCH_GRASS_PLAIN).
/** PLAIN_VEGETATION: count_extra(0, 0.05, 1) — no tree, or one with chance 0.05, per chunk. */
export const PLAINS_TREE_CHANCE = 0.05;
/** PLAIN_VEGETATION's random selector: FANCY_OAK_BEES_005 at chance 0.33333334, else OAK_BEES_005. */
export const FANCY_OAK_CHANCE = 0.33333334;
/** Decorators.BEEHIVE_005: a bee nest on the tree with probability 0.05. */
export const BEEHIVE_CHANCE = 0.05;
/** PATCH_TALL_GRASS_2: COUNT_NOISE(−0.8, 0, 7) patches of TALL_GRASS_CONFIG (64 tries, no projection). */
const TALL_GRASS_PATCHES = { lowNoise: 0, highNoise: 7, tries: 64 };
/** FLOWER_PLAIN_DECORATED: COUNT_NOISE(−0.8, 15, 4) patches of FLOWER_PLAIN (64 tries), y from ADD_32 on the heightmap. */
export const FLOWER_PATCHES = { lowNoise: 15, highNoise: 4, tries: 64 };
/** PATCH_GRASS_PLAIN: COUNT_NOISE(−0.8, 5, 10) patches of DEFAULT_GRASS_CONFIG (32 tries), projected to the surface. */
export const GRASS_PATCHES = { lowNoise: 5, highNoise: 10, tries: 32 };
/** RandomPatchConfiguration defaults: x/z spread 7, y spread 3 (offsets nextInt(s + 1) − nextInt(s + 1)). */
const SPREAD_XZ = 7,
  SPREAD_Y = 3;

export interface PlainsTree {
  kind: 'oak' | 'fancy_oak';
  /** Trunk base (the first log) and the tree's blocks, logs before leaves. */
  x: number;
  y: number;
  z: number;
  logs: number[];
  leaves: number[];
  beeNest: [number, number, number] | null;
}

/** The trees rooted in chunk (cx, cz) (PLAIN_VEGETATION with HEIGHTMAP_SQUARE placement). */
export function plainsTreesOfChunk(seed: number, cx: number, cz: number, options: WorldOptions = VANILLA_WORLD): PlainsTree[] {
  const r = stream(seed, SALT.tree, cx, cz);
  const n = scaledCount(r, PLAINS_TREE_CHANCE, options.treeDensity);
  const trees: PlainsTree[] = [];
  for (let i = 0; i < n; i++) {
    const x = cx * 16 + r.nextInt(16),
      z = cz * 16 + r.nextInt(16);
    const y = plainsSurfaceY(seed, x, z) + 1;
    const t = new Stream(r.nextSeed());
    trees.push(t.nextFloat() < FANCY_OAK_CHANCE ? fancyOak(t, x, y, z) : oak(t, x, y, z));
  }
  return trees;
}

/** OAK: StraightTrunkPlacer(4, 2, 0) — 4 + nextInt(3) logs — under BlobFoliagePlacer(radius 2, offset 0, height 3). */
function oak(r: Stream, x: number, y: number, z: number): PlainsTree {
  const height = 4 + r.nextInt(3);
  const logs: number[] = [];
  for (let k = 0; k < height; k++) logs.push(x, y + k, z);
  const leaves: number[] = [];
  const top = y + height;
  // Blob foliage: layers top..top−3 with radius 1, 1, 2, 2; corners skipped at random, always on the top layer.
  for (let dy = 0; dy >= -3; dy--) {
    const radius = dy >= -1 ? 1 : 2;
    for (let dx = -radius; dx <= radius; dx++) {
      for (let dz = -radius; dz <= radius; dz++) {
        if (Math.abs(dx) === radius && Math.abs(dz) === radius && (r.nextInt(2) === 0 || dy === 0)) continue;
        leaves.push(x + dx, top + dy, z + dz);
      }
    }
  }
  return { kind: 'oak', x, y, z, logs, leaves, beeNest: beeNest(r, logs, leaves) };
}

/** FANCY_OAK: FancyTrunkPlacer(3, 11, 0) with branches, FancyFoliagePlacer(radius 2, offset 4, height 4) clusters. */
function fancyOak(r: Stream, x: number, y: number, z: number): PlainsTree {
  const height = 3 + r.nextInt(12);
  const j = height + 2;
  const trunkTop = Math.floor(j * 0.618);
  const m = y + trunkTop;
  // Foliage nodes: the crown, then per layer n (from j − 5 down) one limb where the tree shape allows.
  const nodes: { x: number; y: number; z: number; branchY: number }[] = [{ x, y: y + j - 5, z, branchY: m }];
  for (let n = j - 5; n >= 0; n--) {
    const f = fancyTreeShape(j, n);
    if (f < 0) continue;
    const e = f * (r.nextFloat() + 0.328);
    const g = r.nextFloat() * 2 * Math.PI;
    const nx = x + Math.floor(e * Math.sin(g) + 0.5),
      nz = z + Math.floor(e * Math.cos(g) + 0.5),
      ny = y + n - 1;
    const s = ny - Math.sqrt((x - nx) ** 2 + (z - nz) ** 2) * 0.381;
    nodes.push({ x: nx, y: ny, z: nz, branchY: s > m ? m : Math.trunc(s) });
  }
  const logs: number[] = [];
  limb(x, y, z, x, m, z, logs);
  for (const node of nodes) {
    // makeBranches: limbs from the trunk to the nodes at least 20 % up the tree.
    if ((node.x !== x || node.y !== node.branchY || node.z !== z) && node.branchY - y >= j * 0.2) limb(x, node.branchY, z, node.x, node.y, node.z, logs);
  }
  const leaves: number[] = [];
  for (const node of nodes) {
    // Five layers above the node: radius 2 at the ends, 3 between; cells with (|dx|+½)² + (|dz|+½)² > r² skipped.
    for (let dy = 0; dy <= 4; dy++) {
      const radius = dy === 0 || dy === 4 ? 2 : 3;
      for (let dx = -radius; dx <= radius; dx++) {
        for (let dz = -radius; dz <= radius; dz++) {
          if ((Math.abs(dx) + 0.5) ** 2 + (Math.abs(dz) + 0.5) ** 2 > radius * radius) continue;
          leaves.push(node.x + dx, node.y + dy, node.z + dz);
        }
      }
    }
  }
  return { kind: 'fancy_oak', x, y, z, logs, leaves, beeNest: beeNest(r, logs, leaves) };
}

/** FancyTrunkPlacer.treeShape: the half-width of the crown at layer `y` of a `height`-tall tree (−1: no limb). */
function fancyTreeShape(height: number, y: number): number {
  if (y < height * 0.3) return -1;
  const f = height / 2,
    g = f - y;
  let h = Math.sqrt(f * f - g * g);
  if (g === 0) h = f;
  else if (Math.abs(g) >= f) return 0;
  return h * 0.5;
}

/** FancyTrunkPlacer.makeLimb: a straight line of logs from (x0, y0, z0) to (x1, y1, z1), both included. */
function limb(x0: number, y0: number, z0: number, x1: number, y1: number, z1: number, out: number[]): void {
  const dx = x1 - x0,
    dy = y1 - y0,
    dz = z1 - z0;
  const steps = Math.max(Math.abs(dx), Math.abs(dy), Math.abs(dz));
  for (let k = 0; k <= steps; k++) {
    const f = steps === 0 ? 0 : k / steps;
    out.push(Math.floor(x0 + 0.5 + dx * f), Math.floor(y0 + 0.5 + dy * f), Math.floor(z0 + 0.5 + dz * f));
  }
}

/** BeehiveDecorator(0.05): a south-facing bee nest beside the trunk, just under the lowest leaves. */
function beeNest(r: Stream, logs: number[], leaves: number[]): [number, number, number] | null {
  if (r.nextFloat() >= BEEHIVE_CHANCE) return null;
  let lowLeaf = Infinity;
  for (let i = 1; i < leaves.length; i += 3) lowLeaf = Math.min(lowLeaf, leaves[i]!);
  const y = Math.max(lowLeaf - 1, logs[1]!);
  for (let i = 0; i < logs.length; i += 3) if (logs[i + 1] === y) return [logs[i]!, y, logs[i + 2]! + 1];
  return null;
}

// Module-local copies of the hot state ids: imported bindings compile to getter calls under tsx.
const AIR = S.air,
  GRASS = S.grass,
  TALL_LOWER = S.tall_grass_lower,
  TALL_UPPER = S.tall_grass_upper,
  GRASS_BLOCK = S.grass_block,
  DIRT = S.dirt;
/** Plain plants (grass, the halves of tall grass) that trees may replace. */
const isAirOrPlant = (s: number) => s === AIR || s === GRASS || s === TALL_LOWER || s === TALL_UPPER;

/** A patch feature of the plains (RandomPatchFeature): its salt, its COUNT_NOISE counts (below / from −0.8 of
 * the biome info noise) and tries per patch, and what each patch draws from its own stream before its tries:
 * its origin y, then the state it places. */
interface PatchFeature {
  salt: number;
  counts: { lowNoise: number; highNoise: number; tries: number };
  originY(seed: number, pr: Stream, x0: number, z0: number): number;
  state(seed: number, pr: Stream, x0: number, z0: number): number;
}
/** ADD_32 on the heightmap: origin y = nextInt(heightmap + 32). */
const add32Y = (seed: number, pr: Stream, x0: number, z0: number) => pr.nextInt(plainsSurfaceY(seed, x0, z0) + 1 + 32);
/** PATCH_TALL_GRASS_2: ADD_32, no projection; a double plant (its lower half named here). */
const TALL_GRASS_FEATURE: PatchFeature = { salt: SALT.tallGrass, counts: TALL_GRASS_PATCHES, originY: add32Y, state: () => TALL_LOWER };
/** FLOWER_PLAIN_DECORATED: ADD_32, then one flower kind per patch (PlainFlowerProvider). */
const FLOWER_FEATURE: PatchFeature = {
  salt: SALT.flowers,
  counts: FLOWER_PATCHES,
  originY: add32Y,
  state: (seed, pr, x0, z0) => plainFlower(seed, pr, x0, z0),
};
/** PATCH_GRASS_PLAIN: the origin is projected to the surface (WORLD_SURFACE_WG heightmap); no draw. */
const GRASS_FEATURE: PatchFeature = {
  salt: SALT.grass,
  counts: GRASS_PATCHES,
  originY: (seed, _pr, x0, z0) => plainsSurfaceY(seed, x0, z0) + 1,
  state: () => GRASS,
};

/**
 * The tries of one patch feature of one origin chunk, by the chunk they land in (a try lies within 7 blocks of
 * its patch's origin, so in the 3×3 chunks around the origin chunk): the chunk (ox + i − 1, oz + j − 1) is
 * bucket 3i + j, and its tries are cells[starts[b]..starts[b + 1]) (cell indexes in that chunk) placing
 * states[k]. Only tries at the y plants can stand at are kept (no other can place anything). Each bucket keeps
 * the draw order (patch, then try), the order in which tries check and write cells.
 */
interface PatchTries {
  cells: Uint16Array;
  states: Uint16Array;
  starts: Uint16Array;
}

/** The most tries a feature draws in one origin chunk (15 flower patches × 64 tries): patchTries' scratch. */
const MAX_PATCH_TRIES = Math.max(
  ...[TALL_GRASS_FEATURE, FLOWER_FEATURE, GRASS_FEATURE].map((f) => Math.max(f.counts.lowNoise, f.counts.highNoise) * f.counts.tries),
);
const tryBucket = new Uint8Array(MAX_PATCH_TRIES),
  tryCell = new Uint16Array(MAX_PATCH_TRIES),
  tryState = new Uint16Array(MAX_PATCH_TRIES),
  bucketFill = new Uint16Array(9);

/**
 * RandomPatchFeature for the patches of origin chunk (ox, oz): COUNT_NOISE patches, each at a random column of
 * the origin chunk (x, then z) with its own stream (the next seed); each patch draws its origin y and state,
 * then each of `tries` positions ±7/±3/±7 around its origin (offsets nextInt(s + 1) − nextInt(s + 1), x then y
 * then z). A patch whose tries cannot reach the y plants stand at (most ADD_32 origins: nextInt(heightmap + 32)
 * is anywhere from 0) draws no tries: its stream is its own, so nothing else changes. `only` ≥ 0 asks for
 * bucket `only` alone (a chunk generated without a cache): patches that cannot reach it draw no further either,
 * and a try whose x misses it skips its other four draws rather than computing them (the same stream either
 * way); −1 draws every try, once for the nine chunks.
 */
function patchTries(seed: number, f: PatchFeature, ox: number, oz: number, only: number): PatchTries {
  const { minY } = WORLD_BANDS.plains;
  const r = stream(seed, f.salt, ox, oz);
  const patches = biomeInfoNoise(seed, ox * 16, oz * 16) < -0.8 ? f.counts.lowNoise : f.counts.highNoise;
  const tries = f.counts.tries;
  // The x and z range wanted: the bucket's chunk, or all nine.
  const xMin = only < 0 ? ox * 16 - 16 : (ox + Math.floor(only / 3) - 1) * 16,
    zMin = only < 0 ? oz * 16 - 16 : (oz + (only % 3) - 1) * 16;
  const xMax = xMin + (only < 0 ? 47 : 15),
    zMax = zMin + (only < 0 ? 47 : 15);
  let n = 0;
  for (let p = 0; p < patches; p++) {
    const x0 = ox * 16 + r.nextInt(16),
      z0 = oz * 16 + r.nextInt(16);
    const pr = new Stream(r.nextSeed());
    if (x0 < xMin - SPREAD_XZ || x0 > xMax + SPREAD_XZ || z0 < zMin - SPREAD_XZ || z0 > zMax + SPREAD_XZ) continue;
    const y0 = f.originY(seed, pr, x0, z0);
    if (y0 + SPREAD_Y < PLANT_MIN_Y || y0 - SPREAD_Y > PLANT_MAX_Y) continue;
    const state = f.state(seed, pr, x0, z0);
    // nextInt(SPREAD_XZ + 1) and nextInt(SPREAD_Y + 1), 8 and 4, as the draws' top 3 and 2 bits.
    for (let t = 0; t < tries; t++) {
      const x = x0 + (pr.nextUint32() >>> 29) - (pr.nextUint32() >>> 29);
      if (x < xMin || x > xMax) {
        pr.skip(4);
        continue;
      }
      const y = y0 + (pr.nextUint32() >>> 30) - (pr.nextUint32() >>> 30);
      const z = z0 + (pr.nextUint32() >>> 29) - (pr.nextUint32() >>> 29);
      if (z < zMin || z > zMax || y < PLANT_MIN_Y || y > PLANT_MAX_Y) continue;
      tryBucket[n] = ((x >> 4) - ox + 1) * 3 + ((z >> 4) - oz + 1);
      tryCell[n] = cellIndex(x & 15, y - minY, z & 15);
      tryState[n] = state;
      n++;
    }
  }
  // A stable counting sort by bucket.
  const starts = new Uint16Array(10);
  for (let k = 0; k < n; k++) starts[tryBucket[k]! + 1]!++;
  for (let b = 1; b < 10; b++) starts[b]! += starts[b - 1]!;
  bucketFill.set(starts.subarray(0, 9));
  const cells = new Uint16Array(n),
    states = new Uint16Array(n);
  for (let k = 0; k < n; k++) {
    const j = bucketFill[tryBucket[k]!]!++;
    cells[j] = tryCell[k]!;
    states[j] = tryState[k]!;
  }
  return { cells, states, starts };
}

/** What origin chunk (ox, oz) puts on the chunks around it: its patches' tries and its trees (≤ 9 blocks out). */
interface OriginFeatures {
  tallGrass: PatchTries;
  trees: PlainsTree[];
  flowers: PatchTries;
  grass: PatchTries;
  /** How many of the nine chunks it reaches have been generated with it. */
  uses: number;
}

/** Beyond this many origin chunks a cache starts afresh (a world's frontier of half-used origins is far smaller). */
const CACHE_MAX_ORIGINS = 2048;

/**
 * A chunk column's (cx, cz) as one small integer (chunks within ±16,384 of the origin, 262 km): a Smi, so the
 * chunk maps, the feature caches' origin maps and arrays of keys stay on V8's fast paths (a key past 2^30 made each new world's key array change
 * its elements kind and threw the chunk lookup out of optimised code at every reset).
 */
export const chunkKey = (cx: number, cz: number) => ((cx + 16384) << 15) | ((cz + 16384) & 0x7fff);
export const chunkKeyX = (key: number) => (key >> 15) - 16384;
export const chunkKeyZ = (key: number) => (key & 0x7fff) - 16384;

/**
 * What the chunks of one world share: each plains chunk takes features from its own and its 8 neighbouring
 * origin chunks, so without a cache every origin's patches are drawn again for each of the nine chunks they
 * reach. An origin's features stay until all nine have been generated (a world generates each chunk once).
 * Each underground chunk is carved by the caves and canyons of the 17×17 origin chunks around it and veined by
 * the ores of its 3×3: an origin's carvers and veins are drawn once and kept (UndergroundOrigin), up to
 * UNDERGROUND_MAX_ORIGINS. Generation is the same with or without one; only the work differs.
 */
export class ChunkFeatureCache {
  readonly origins = new Map<number, OriginFeatures>();
  readonly undergroundOrigins = new Map<number, UndergroundOrigin>();
  constructor(
    readonly seed: number,
    readonly options: WorldOptions = VANILLA_WORLD,
  ) {}
}

/** Origin chunk (ox, oz)'s features: cached (all nine buckets), or for bucket `only` alone without a cache. */
function originFeatures(seed: number, options: WorldOptions, ox: number, oz: number, only: number, cache: ChunkFeatureCache | undefined): OriginFeatures {
  const key = chunkKey(ox, oz);
  let o = cache?.origins.get(key);
  if (o) return o;
  const b = cache ? -1 : only;
  // In the order generatePlainsChunk places them: the streams are independent, so drawing order is free.
  o = {
    tallGrass: patchTries(seed, TALL_GRASS_FEATURE, ox, oz, b),
    trees: plainsTreesOfChunk(seed, ox, oz, options),
    flowers: patchTries(seed, FLOWER_FEATURE, ox, oz, b),
    grass: patchTries(seed, GRASS_FEATURE, ox, oz, b),
    uses: 0,
  };
  if (cache) {
    if (cache.origins.size >= CACHE_MAX_ORIGINS) cache.origins.clear();
    cache.origins.set(key, o);
  }
  return o;
}

// Scratch for one plains chunk: its surface heights, its two height noises and its nine origins' features.
const chunkTops = new Int32Array(256),
  heightNoise = new Float64Array(256),
  detailNoise = new Float64Array(256),
  chunkOrigins: OriginFeatures[] = [];

/**
 * noise2 at the 256 columns of chunk (cx, cz) into out[lz·16 + lx]: the same arithmetic as noise2, column for
 * column (so the same numbers), with each lattice value hashed once rather than four times per column.
 */
function noise2OfChunk(seed: number, cx: number, cz: number, scale: number, out: Float64Array): void {
  const x0 = cx * 16,
    z0 = cz * 16;
  const ixMin = Math.floor(x0 / scale),
    izMin = Math.floor(z0 / scale);
  const w = Math.floor((x0 + 15) / scale) - ixMin + 2,
    h = Math.floor((z0 + 15) / scale) - izMin + 2;
  for (let j = 0; j < h; j++) for (let i = 0; i < w; i++) lattice[j * w + i] = rand01(seed, ixMin + i, izMin + j);
  for (let lx = 0; lx < 16; lx++) {
    const fx = (x0 + lx) / scale;
    const ix = Math.floor(fx);
    latticeX[lx] = ix - ixMin;
    fracX[lx] = smooth(fx - ix);
  }
  for (let lz = 0; lz < 16; lz++) {
    const fz = (z0 + lz) / scale;
    const iz = Math.floor(fz);
    const tz = smooth(fz - iz);
    const row = (iz - izMin) * w;
    for (let lx = 0; lx < 16; lx++) {
      const k = row + latticeX[lx]!,
        tx = fracX[lx]!;
      const a = lattice[k]!,
        b = lattice[k + 1]!,
        c = lattice[k + w]!,
        d = lattice[k + w + 1]!;
      out[lz * 16 + lx] = (a + (b - a) * tx + (c - a) * tz + (a - b - c + d) * tx * tz) * 2 - 1;
    }
  }
}
// noise2OfChunk's scratch: lattice values (≤ 4 × 4 for the smallest scale, 11), per-x lattice column and weight.
const lattice = new Float64Array(64),
  latticeX = new Int32Array(16),
  fracX = new Float64Array(16);

/** A plant may go at cell i: it is empty and the block under it is the surface's grass (canSurvive). */
const plantable = (out: Uint16Array, tops: Int32Array, i: number, minY: number) => out[i] === AIR && minY + (i >> 8) === tops[i & 255]! + 1;

/** Flowers and grass: each try on a plantable cell places its patch's state. */
function placePlants(out: Uint16Array, tops: Int32Array, minY: number, tries: PatchTries, b: number): void {
  const { cells, states, starts } = tries;
  for (let k = starts[b]!, end = starts[b + 1]!; k < end; k++) {
    const i = cells[k]!;
    if (plantable(out, tops, i, minY)) out[i] = states[k]!;
  }
}

function generatePlainsChunk(seed: number, cx: number, cz: number, out: Uint16Array, options: WorldOptions, cache: ChunkFeatureCache | undefined): void {
  const { minY, height } = WORLD_BANDS.plains;
  out.fill(AIR);
  // The surface: plainsSurfaceY for each column, from the chunk's noise.
  const tops = chunkTops;
  noise2OfChunk(seed + SALT.height, cx, cz, 40, heightNoise);
  noise2OfChunk(seed + SALT.detail, cx, cz, 11, detailNoise);
  for (let xz = 0; xz < 256; xz++) {
    const top = 64 + Math.floor(2.6 * heightNoise[xz]! + 0.9 * detailNoise[xz]!);
    tops[xz] = top;
    for (let y = minY; y <= top && y < minY + height; y++) out[((y - minY) << 8) | xz] = y === top ? GRASS_BLOCK : y >= top - 3 ? DIRT : STONE;
  }
  // Features of this chunk's and its 8 neighbours' origins, in a fixed order (dcx, then dcz): this chunk is
  // bucket 8 − k of origin k.
  const origins = chunkOrigins;
  for (let k = 0; k < 9; k++) {
    const ox = cx + Math.floor(k / 3) - 1,
      oz = cz + (k % 3) - 1;
    origins[k] = originFeatures(seed, options, ox, oz, 8 - k, cache);
  }
  // PATCH_TALL_GRASS_2: a double plant where the cell above is empty too.
  for (let k = 0; k < 9; k++) {
    const { cells, starts } = origins[k]!.tallGrass;
    for (let j = starts[8 - k]!, end = starts[9 - k]!; j < end; j++) {
      const i = cells[j]!;
      if (!plantable(out, tops, i, minY) || (i >> 8) + 1 >= height || out[i + 256] !== AIR) continue;
      out[i] = TALL_LOWER;
      out[i + 256] = TALL_UPPER;
    }
  }
  // PLAIN_VEGETATION: logs replace plants and air; leaves only fill air and plants.
  const index = (x: number, y: number, z: number) => {
    const lx = x - cx * 16,
      lz = z - cz * 16,
      yy = y - minY;
    return lx < 0 || lx > 15 || lz < 0 || lz > 15 || yy < 0 || yy >= height ? -1 : cellIndex(lx, yy, lz);
  };
  for (let k = 0; k < 9; k++) {
    for (const t of origins[k]!.trees) {
      const under = index(t.x, t.y - 1, t.z);
      if (under >= 0) out[under] = DIRT; // TrunkPlacer.setDirtAt: the grass under the trunk turns to dirt
      for (let m = 0; m < t.logs.length; m += 3) {
        const i = index(t.logs[m]!, t.logs[m + 1]!, t.logs[m + 2]!);
        if (i >= 0 && isAirOrPlant(out[i]!)) out[i] = S.oak_log;
      }
      for (let m = 0; m < t.leaves.length; m += 3) {
        const i = index(t.leaves[m]!, t.leaves[m + 1]!, t.leaves[m + 2]!);
        if (i >= 0 && isAirOrPlant(out[i]!)) out[i] = S.oak_leaves;
      }
      if (t.beeNest) {
        const i = index(t.beeNest[0], t.beeNest[1], t.beeNest[2]);
        if (i >= 0 && isAirOrPlant(out[i]!)) out[i] = S.bee_nest;
      }
    }
  }
  // FLOWER_PLAIN_DECORATED, then PATCH_GRASS_PLAIN.
  for (let k = 0; k < 9; k++) placePlants(out, tops, minY, origins[k]!.flowers, 8 - k);
  for (let k = 0; k < 9; k++) placePlants(out, tops, minY, origins[k]!.grass, 8 - k);
  if (!cache) return;
  // An origin whose nine chunks are all generated is done.
  for (let k = 0; k < 9; k++) {
    const o = origins[k]!;
    if (++o.uses === 9) cache.origins.delete(chunkKey(cx + Math.floor(k / 3) - 1, cz + (k % 3) - 1));
  }
}

// ---- plains animals (NaturalSpawner.spawnMobsForChunkGeneration) ----

/** MobSpawnSettings.Builder.creatureGenerationProbability: 0.1 (plains keeps the default). */
export const CREATURE_SPAWN_PROBABILITY = 0.1;
/** BiomeDefaultFeatures.plainsSpawns: farmAnimals (sheep 12, pig 10, chicken 10, cow 8, groups of 4) + horse 5 (2–6), donkey 1 (1–3). */
export const PLAINS_CREATURES: readonly { type: PlainsMob; weight: number; min: number; max: number }[] = [
  { type: 'sheep', weight: 12, min: 4, max: 4 },
  { type: 'pig', weight: 10, min: 4, max: 4 },
  { type: 'chicken', weight: 10, min: 4, max: 4 },
  { type: 'cow', weight: 8, min: 4, max: 4 },
  { type: 'horse', weight: 5, min: 2, max: 6 },
  { type: 'donkey', weight: 1, min: 1, max: 3 },
];
const CREATURE_WEIGHT = PLAINS_CREATURES.reduce((s, c) => s + c.weight, 0);
/** Entity widths (minecraft-data 1.16.5) for the spawn clamp to the chunk. */
const CREATURE_WIDTH: Readonly<Record<PlainsMob, number>> = { sheep: 0.9, pig: 0.9, chicken: 0.4, cow: 0.9, horse: 1.39648, donkey: 1.39648 };

export interface MobSpawn {
  type: string;
  x: number;
  y: number;
  z: number;
  maxHealth: number;
  /** movement_speed attribute (horses roll theirs). */
  speed?: number;
}

/** AbstractHorse.generateRandomMaxHealth / generateRandomSpeed; donkeys: 0.175 (createBaseChestedHorseAttributes). */
function horseStats(type: PlainsMob, r: Stream): { maxHealth: number; speed: number } {
  const maxHealth = 15 + r.nextInt(8) + r.nextInt(9);
  if (type === 'donkey') return { maxHealth, speed: 0.175 };
  return { maxHealth, speed: (0.45 + r.nextDouble() * 0.3 + r.nextDouble() * 0.3 + r.nextDouble() * 0.3) * 0.25 };
}

/**
 * The animals placed when plains chunk (cx, cz) is generated: while nextFloat() < 0.1, a group of one weighted
 * species at a random column, members random-walking ±4 from it within the chunk, each on the grass surface
 * (Animal.checkAnimalSpawnRules: grass block below; daylight). Positions are feet positions.
 */
export function chunkCreatures(seed: number, cx: number, cz: number, options: WorldOptions = VANILLA_WORLD): MobSpawn[] {
  const r = stream(seed, SALT.mobs, cx, cz);
  // The density option scales the expected number of groups, p / (1 − p).
  const groups = (CREATURE_SPAWN_PROBABILITY / (1 - CREATURE_SPAWN_PROBABILITY)) * options.animalDensity;
  const p = groups / (1 + groups);
  const out: MobSpawn[] = [];
  const x0 = cx * 16,
    z0 = cz * 16;
  while (r.nextFloat() < p) {
    let u = r.nextInt(CREATURE_WEIGHT);
    const kind = PLAINS_CREATURES.find((c) => (u -= c.weight) < 0)!;
    const count = kind.min + r.nextInt(1 + kind.max - kind.min);
    const w = CREATURE_WIDTH[kind.type];
    let l = x0 + r.nextInt(16),
      m = z0 + r.nextInt(16);
    const n = l,
      o = m;
    for (let k = 0; k < count; k++) {
      // One try per member here (the game retries up to 4 times where a tree trunk or a wall is in the way;
      // plains columns are all spawnable grass, so the first try succeeds).
      const x = Math.min(Math.max(l, x0 + w), x0 + 16 - w),
        z = Math.min(Math.max(m, z0 + w), z0 + 16 - w);
      const stats = kind.type === 'horse' || kind.type === 'donkey' ? horseStats(kind.type, r) : { maxHealth: MOB_MAX_HEALTH[kind.type]!, speed: undefined };
      out.push({ type: kind.type, x, y: plainsSurfaceY(seed, Math.floor(x), Math.floor(z)) + 1, z, ...stats });
      l += r.nextInt(5) - r.nextInt(5);
      m += r.nextInt(5) - r.nextInt(5);
      while (l < x0 || l >= x0 + 16 || m < z0 || m >= z0 + 16) {
        l = n + r.nextInt(5) - r.nextInt(5);
        m = o + r.nextInt(5) - r.nextInt(5);
      }
    }
  }
  return out;
}

/**
 * Chunks around the agent whose chunk-generation animals are present: radius 4 reaches at least 64 m (the view
 * distance) from anywhere in the agent's chunk. The game keeps more chunks loaded; animals beyond could only
 * stroll into view from there, and nothing beyond 64 m is seen.
 */
export const CREATURE_CHUNK_RADIUS = 4;

/** The animals of the chunks within CREATURE_CHUNK_RADIUS of the agent's start (for a server that spawns once). */
export function mobSpawns(seed: number, options: WorldOptions = VANILLA_WORLD): MobSpawn[] {
  const spawn = spawnPoint('plains', seed);
  const scx = Math.floor(spawn.x / 16),
    scz = Math.floor(spawn.z / 16);
  const out: MobSpawn[] = [];
  for (let dx = -CREATURE_CHUNK_RADIUS; dx <= CREATURE_CHUNK_RADIUS; dx++) {
    for (let dz = -CREATURE_CHUNK_RADIUS; dz <= CREATURE_CHUNK_RADIUS; dz++) out.push(...chunkCreatures(seed, scx + dx, scz + dz, options));
  }
  return out;
}

// ---- underground ----

/**
 * 1.16 ore features (Features.ORE_*): size, attempts per chunk (count), and the y decorator — range(n): y =
 * nextInt(n); lapis: depth_average(16, 16). All replace natural stone (stone, granite, diorite, andesite).
 * Order as BiomeDefaultFeatures: addDefaultUndergroundVariety, then addDefaultOres.
 */
export const ORES: readonly { state: number; size: number; count: number; range: number; depthAverage?: true }[] = [
  { state: S.dirt, size: 33, count: 10, range: 256 },
  { state: S.gravel, size: 33, count: 8, range: 256 },
  { state: S.granite, size: 33, count: 10, range: 80 },
  { state: S.diorite, size: 33, count: 10, range: 80 },
  { state: S.andesite, size: 33, count: 10, range: 80 },
  { state: S.coal_ore, size: 17, count: 20, range: 128 },
  { state: S.iron_ore, size: 9, count: 20, range: 64 },
  { state: S.gold_ore, size: 9, count: 2, range: 32 },
  { state: S.redstone_ore, size: 8, count: 8, range: 16 },
  { state: S.diamond_ore, size: 8, count: 1, range: 16 },
  { state: S.lapis_ore, size: 7, count: 1, range: 16, depthAverage: true },
];
/** WorldCarver.carveBlock: carved cells below y 11 fill with lava. */
export const LAVA_LEVEL = 10;
/** Carvers.CAVE: ProbabilityFeatureConfiguration(0.14285715); Carvers.CANYON: 0.02. Origins within 8 chunks carve. */
export const CAVE_CHANCE = 0.14285715,
  CANYON_CHANCE = 0.02;
const CARVER_CHUNK_RANGE = 8;
/** Half extent of the room carved around the underground spawn (x/z), so the agent starts free. */
const SPAWN_ROOM = 1;

const STONE = S.stone,
  GRANITE = S.granite,
  DIORITE = S.diorite,
  ANDESITE = S.andesite,
  BEDROCK = S.bedrock,
  LAVA = S.lava,
  CAVE_AIR = S.cave_air;
const NATURAL_STONE = new Set<number>([STONE, GRANITE, DIORITE, ANDESITE]);

/**
 * OreFeature.place: a vein of `size` spheres along a segment of length size/4 at a random angle, radii
 * ((sin(πf) + 1)·nextDouble()·size/16 + 1)/2; spheres inside bigger ones are dropped; cells of natural stone
 * inside any sphere become the ore. Appends the kept spheres (x, y, z, r) that reach y < `topY` to `out`.
 */
const veinScratch = new Float64Array(64 * 4);
function oreVein(r: Stream, size: number, px: number, py: number, pz: number, topY: number, out: number[]): void {
  const f = r.nextFloat() * Math.PI;
  const g = size / 8;
  const x1 = px + Math.sin(f) * g,
    x2 = px - Math.sin(f) * g;
  const z1 = pz + Math.cos(f) * g,
    z2 = pz - Math.cos(f) * g;
  const y1 = py + r.nextInt(3) - 2,
    y2 = py + r.nextInt(3) - 2;
  const ds = veinScratch;
  for (let k = 0; k < size; k++) {
    const t = k / size;
    const h = (r.nextDouble() * size) / 16;
    ds[k * 4] = x1 + (x2 - x1) * t;
    ds[k * 4 + 1] = y1 + (y2 - y1) * t;
    ds[k * 4 + 2] = z1 + (z2 - z1) * t;
    ds[k * 4 + 3] = ((Math.sin(Math.PI * t) + 1) * h + 1) / 2;
  }
  // Only spheres less than `reach` apart can drop one another: sphere k lies |m − k|/4 from sphere m across x/z
  // (the segment spans size/4 there in `size` steps) and radii differ by less than size/16 (each is in
  // [0.5, size/16 + 0.5)), so from |m − k| > size/4 the test below is false; one step more for rounding.
  const reach = Math.ceil(size / 4) + 1;
  for (let k = 0; k < size - 1; k++) {
    if (ds[k * 4 + 3]! <= 0) continue;
    for (let m = k + 1, mEnd = Math.min(size, k + reach + 1); m < mEnd; m++) {
      if (ds[m * 4 + 3]! <= 0) continue;
      const dx = ds[k * 4]! - ds[m * 4]!,
        dy = ds[k * 4 + 1]! - ds[m * 4 + 1]!,
        dz = ds[k * 4 + 2]! - ds[m * 4 + 2]!;
      const dr = ds[k * 4 + 3]! - ds[m * 4 + 3]!;
      if (dr * dr > dx * dx + dy * dy + dz * dz) {
        if (dr > 0) ds[m * 4 + 3] = -1;
        else ds[k * 4 + 3] = -1;
      }
    }
  }
  for (let k = 0; k < size; k++) {
    const d = ds[k * 4 + 3]!;
    if (d >= 0 && ds[k * 4 + 1]! - d < topY) out.push(ds[k * 4]!, ds[k * 4 + 1]!, ds[k * 4 + 2]!, d);
  }
}

/** Appends the ore spheres (x, y, z, r) of every vein of ore `oi` that starts in chunk (ox, oz) to `out`, in draw order. */
function oreSpheres(seed: number, oi: number, ox: number, oz: number, density: number, topY: number, out: number[]): void {
  const ore = ORES[oi]!;
  const r = stream(seed, SALT.ore + oi * 97, ox, oz);
  const veins = scaledCount(r, ore.count, density);
  for (let v = 0; v < veins; v++) {
    const vr = new Stream(r.nextSeed());
    const x = ox * 16 + vr.nextInt(16),
      z = oz * 16 + vr.nextInt(16);
    const y = ore.depthAverage ? vr.nextInt(16) + vr.nextInt(16) - 16 + 16 : vr.nextInt(ore.range);
    if (y - ore.size / 8 - 3 >= topY) continue; // entirely above the stored band
    oreVein(vr, ore.size, x, y, z, topY, out);
  }
}

/**
 * What underground origin chunk (ox, oz) carves and veins, drawn once per world. `carvers` packs its carved
 * ellipsoids (caves, then its canyon), CARVE_STRIDE numbers each: centre x, y, z, horizontal and vertical
 * radii, and 1 for a canyon's (whose width profile by y is `canyonWidths`, CanyonWorldCarver.rs: at most one
 * canyon per origin) or 0 for a cave's; in draw order, the order in which they carve. [xLo, xHi] × [zLo, zHi]
 * bounds their x ± rh and z ± rh (a chunk outside it is carved by none of them). Its veins' spheres (x, y, z,
 * r), drawn when a chunk next to it is first generated (only those 3×3 chunks need them), are kept by the chunk
 * they reach and ore: the chunk (ox + i − 1, oz + k − 1) is bucket b = 3i + k, and ore oi's spheres reaching it
 * (with a cell in its column and the stored band) are oreSpheres[oreStarts[g]..oreStarts[g + 1]), g = b ·
 * ORES.length + oi, in draw order; a sphere reaching two chunks is in both. They are dropped once its nine
 * chunks have taken them (a world generates each chunk once; were one generated again, they would be drawn again).
 */
interface UndergroundOrigin {
  carvers: Float64Array;
  canyonWidths: Float32Array | null;
  xLo: number;
  xHi: number;
  zLo: number;
  zHi: number;
  oreSpheres: Float64Array | null;
  oreStarts: Uint32Array | null;
  /** How many chunks have taken its veins since they were drawn: at 9 (all its 3×3) they are dropped. */
  oreUses: number;
}
const CARVE_STRIDE = 6;

/**
 * Beyond this many underground origins a cache starts afresh. A world of a few hundred chunks reaches a few
 * hundred to about a thousand origins (8 chunks around each chunk it has), most of them without a carver.
 */
const UNDERGROUND_MAX_ORIGINS = 4096;

/** Origin chunk (ox, oz)'s carvers (and, with `withOres`, its veins) from `cache`, drawn there if missing. */
function undergroundOrigin(cache: ChunkFeatureCache, ox: number, oz: number, withOres: boolean): UndergroundOrigin {
  const key = chunkKey(ox, oz);
  let o = cache.undergroundOrigins.get(key);
  if (!o) {
    if (cache.undergroundOrigins.size >= UNDERGROUND_MAX_ORIGINS) cache.undergroundOrigins.clear();
    o = carverSpheres(cache.seed, ox, oz);
    cache.undergroundOrigins.set(key, o);
  }
  if (withOres && !o.oreSpheres) bucketOres(o, cache, ox, oz);
  return o;
}

/** Draws origin (ox, oz)'s veins and keeps their spheres by the chunk they reach (UndergroundOrigin). */
function bucketOres(o: UndergroundOrigin, cache: ChunkFeatureCache, ox: number, oz: number): void {
  const { minY, height } = WORLD_BANDS.underground;
  const groups = 9 * ORES.length;
  const starts = new Uint32Array(groups + 1);
  // The chunks a sphere's cells can lie in: its clipped x and z ranges (generateUndergroundChunk's) by chunk,
  // within the 3×3 around the origin (no other chunk reads this origin's veins). Listed as (group, sphere) in
  // draw order, then sorted stably by group.
  const spheres = veinSpheres;
  spheres.length = 0;
  let n = 0;
  for (let oi = 0; oi < ORES.length; oi++) {
    const first = spheres.length;
    oreSpheres(cache.seed, oi, ox, oz, cache.options.oreDensity, minY + height, spheres);
    const most = (n + ((spheres.length - first) / 4) * 9) * 2; // a sphere reaches at most the 3×3 chunks
    if (oreEntries.length < most) {
      const grown = new Int32Array(Math.max(oreEntries.length * 2, most));
      grown.set(oreEntries.subarray(0, n * 2));
      oreEntries = grown;
    }
    for (let k = first; k < spheres.length; k += 4) {
      const ey = spheres[k + 1]!,
        d = spheres[k + 3]!;
      if (Math.max(Math.floor(ey - d), minY) > Math.min(Math.floor(ey + d), minY + height - 1)) continue;
      const ia = Math.max((Math.floor(spheres[k]! - d) >> 4) - ox + 1, 0),
        ib = Math.min((Math.floor(spheres[k]! + d) >> 4) - ox + 1, 2);
      const ka = Math.max((Math.floor(spheres[k + 2]! - d) >> 4) - oz + 1, 0),
        kb = Math.min((Math.floor(spheres[k + 2]! + d) >> 4) - oz + 1, 2);
      for (let i = ia; i <= ib; i++)
        for (let kk = ka; kk <= kb; kk++) {
          const g = (3 * i + kk) * ORES.length + oi;
          starts[g + 1]!++;
          oreEntries[n * 2] = g;
          oreEntries[n * 2 + 1] = k;
          n++;
        }
    }
  }
  for (let g = 1; g <= groups; g++) starts[g]! += starts[g - 1]!;
  const fill = starts.slice(0, groups);
  const out = new Float64Array(starts[groups]! * 4);
  for (let e = 0; e < n; e++) {
    const k = oreEntries[e * 2 + 1]!,
      at = fill[oreEntries[e * 2]!]!++ * 4;
    out[at] = spheres[k]!;
    out[at + 1] = spheres[k + 1]!;
    out[at + 2] = spheres[k + 2]!;
    out[at + 3] = spheres[k + 3]!;
  }
  for (let g = 0; g <= groups; g++) starts[g]! *= 4;
  o.oreSpheres = out;
  o.oreStarts = starts;
}
/** bucketOres' scratch: the origin's vein spheres, and (group, offset there) per sphere and chunk it reaches (grows as needed). */
const veinSpheres: number[] = [];
let oreEntries = new Int32Array(2 * 4096);

/** carverSpheres' scratch: the ellipsoids as drawn, before those outside the band are dropped. */
const carverScratch: number[] = [];
/** Carved ellipsoids of the carvers that start in chunk (cx, cz) (each origin carves the 17×17 chunks around it). */
function carverSpheres(seed: number, cx: number, cz: number): UndergroundOrigin {
  const spheres = carverScratch;
  spheres.length = 0;
  let canyonWidths: Float32Array | null = null;
  const range = 4,
    length = (range * 2 - 1) * 16; // WorldCarver range 4: tunnels of 84..112 steps
  const cave = stream(seed, SALT.cave, cx, cz);
  if (cave.nextFloat() <= CAVE_CHANCE) {
    // CaveWorldCarver.carve: nextInt(nextInt(nextInt(15) + 1) + 1) systems; y = nextInt(nextInt(120) + 8).
    const systems = cave.nextInt(cave.nextInt(cave.nextInt(15) + 1) + 1);
    for (let k = 0; k < systems; k++) {
      const x = cx * 16 + cave.nextInt(16),
        y = cave.nextInt(cave.nextInt(120) + 8),
        z = cz * 16 + cave.nextInt(16);
      let tunnels = 1;
      if (cave.nextInt(4) === 0) {
        // genRoom: one sphere of radius 1.5 + (1 + nextFloat()·6), squashed vertically by 0.5.
        const radius = 1.5 + 1 + cave.nextFloat() * 6;
        spheres.push(x + 1, y, z, radius, radius * 0.5, 0);
        tunnels += cave.nextInt(4);
      }
      for (let m = 0; m < tunnels; m++) {
        const yaw = cave.nextFloat() * Math.PI * 2;
        const pitch = (cave.nextFloat() - 0.5) / 4;
        let thickness = cave.nextFloat() * 2 + cave.nextFloat();
        if (cave.nextInt(10) === 0) thickness *= cave.nextFloat() * cave.nextFloat() * 3 + 1;
        const steps = length - cave.nextInt(length / 4);
        caveTunnel(new Stream(cave.nextSeed()), x, y, z, thickness, yaw, pitch, 0, steps, 1, spheres);
      }
    }
  }
  const canyon = stream(seed, SALT.canyon, cx, cz);
  if (canyon.nextFloat() <= CANYON_CHANCE) {
    // CanyonWorldCarver.carve: y = nextInt(nextInt(40) + 8) + 20, thickness (2·nextFloat() + nextFloat())·2, yScale 3.
    const x = cx * 16 + canyon.nextInt(16),
      y = canyon.nextInt(canyon.nextInt(40) + 8) + 20,
      z = cz * 16 + canyon.nextInt(16);
    const yaw = canyon.nextFloat() * Math.PI * 2;
    const pitch = ((canyon.nextFloat() - 0.5) * 2) / 8;
    const thickness = (canyon.nextFloat() * 2 + canyon.nextFloat()) * 2;
    const steps = length - canyon.nextInt(length / 4);
    canyonWidths = canyonTunnel(new Stream(canyon.nextSeed()), x, y, z, thickness, yaw, pitch, steps, spheres);
  }
  // Kept: the ellipsoids that reach the stored band (carveInto's lowest y, ya + 1, below its top), in order.
  const { minY, height } = WORLD_BANDS.underground;
  let n = 0,
    xLo = Infinity,
    xHi = -Infinity,
    zLo = Infinity,
    zHi = -Infinity;
  for (let k = 0; k < spheres.length; k += CARVE_STRIDE) {
    if (Math.max(Math.floor(spheres[k + 1]! - spheres[k + 4]!) - 1, 1) + 1 >= minY + height) continue;
    const rh = spheres[k + 3]!;
    xLo = Math.min(xLo, spheres[k]! - rh);
    xHi = Math.max(xHi, spheres[k]! + rh);
    zLo = Math.min(zLo, spheres[k + 2]! - rh);
    zHi = Math.max(zHi, spheres[k + 2]! + rh);
    for (let j = 0; j < CARVE_STRIDE; j++) spheres[n++] = spheres[k + j]!;
  }
  spheres.length = n;
  return { carvers: new Float64Array(spheres), canyonWidths, xLo, xHi, zLo, zHi, oreSpheres: null, oreStarts: null, oreUses: 0 };
}

/** CaveWorldCarver.genTunnel: a wandering worm of spheres, splitting once into two branches for thick tunnels. */
function caveTunnel(
  r: Stream,
  x: number,
  y: number,
  z: number,
  thickness: number,
  yaw: number,
  pitch: number,
  from: number,
  steps: number,
  yScale: number,
  out: number[],
): void {
  const split = r.nextInt(Math.floor(steps / 2)) + Math.floor(steps / 4);
  const steep = r.nextInt(6) === 0;
  let dYaw = 0,
    dPitch = 0;
  for (let j = from; j < steps; j++) {
    const rh = 1.5 + Math.sin((Math.PI * j) / steps) * thickness;
    const rv = rh * yScale;
    const c = Math.cos(pitch);
    x += Math.cos(yaw) * c;
    y += Math.sin(pitch);
    z += Math.sin(yaw) * c;
    pitch *= steep ? 0.92 : 0.7;
    pitch += dPitch * 0.1;
    yaw += dYaw * 0.1;
    dPitch *= 0.9;
    dYaw *= 0.75;
    dPitch += (r.nextFloat() - r.nextFloat()) * r.nextFloat() * 2;
    dYaw += (r.nextFloat() - r.nextFloat()) * r.nextFloat() * 4;
    if (j === split && thickness > 1) {
      caveTunnel(new Stream(r.nextSeed()), x, y, z, r.nextFloat() * 0.5 + 0.5, yaw - Math.PI / 2, pitch / 3, j, steps, 1, out);
      caveTunnel(new Stream(r.nextSeed()), x, y, z, r.nextFloat() * 0.5 + 0.5, yaw + Math.PI / 2, pitch / 3, j, steps, 1, out);
      return;
    }
    if (r.nextInt(4) !== 0) out.push(x, y, z, rh, rv, 0);
  }
}

/** CanyonWorldCarver.genCanyon: a long, tall, narrow ravine whose width wobbles with height; returns that width profile. */
function canyonTunnel(r: Stream, x: number, y: number, z: number, thickness: number, yaw: number, pitch: number, steps: number, out: number[]): Float32Array {
  const rs = new Float32Array(256);
  let f = 1;
  for (let i = 0; i < 256; i++) {
    if (i === 0 || r.nextInt(3) === 0) f = 1 + r.nextFloat() * r.nextFloat();
    rs[i] = f * f;
  }
  let dYaw = 0,
    dPitch = 0;
  for (let j = 0; j < steps; j++) {
    let rh = 1.5 + Math.sin((j * Math.PI) / steps) * thickness;
    let rv = rh * 3;
    rh *= r.nextFloat() * 0.25 + 0.75;
    rv *= r.nextFloat() * 0.25 + 0.75;
    const c = Math.cos(pitch),
      s = Math.sin(pitch);
    x += Math.cos(yaw) * c;
    y += s;
    z += Math.sin(yaw) * c;
    pitch *= 0.7;
    pitch += dPitch * 0.05;
    yaw += dYaw * 0.05;
    dPitch *= 0.8;
    dYaw *= 0.5;
    dPitch += (r.nextFloat() - r.nextFloat()) * r.nextFloat() * 2;
    dYaw += (r.nextFloat() - r.nextFloat()) * r.nextFloat() * 4;
    if (r.nextInt(4) !== 0) out.push(x, y, z, rh, rv, 1);
  }
  return rs;
}

/**
 * WorldCarver.carveSphere over one chunk column for the origin's ellipsoid at carvers[k..]: cave cells skip the
 * flat floor (v ≤ −0.7); canyons use the width profile rs. A carved cell becomes lava at y ≤ LAVA_LEVEL, cave
 * air above; bedrock stays.
 */
function carveInto(o: UndergroundOrigin, k: number, cx: number, cz: number, out: Uint16Array): void {
  const { minY, height } = WORLD_BANDS.underground;
  const c = o.carvers;
  const sx = c[k]!,
    sy = c[k + 1]!,
    sz = c[k + 2]!,
    rh = c[k + 3]!,
    rv = c[k + 4]!;
  const rs = c[k + 5] === 1 ? o.canyonWidths! : null;
  const x0 = cx * 16,
    z0 = cz * 16;
  if (sx + rh < x0 - 1 || sx - rh > x0 + 17 || sz + rh < z0 - 1 || sz - rh > z0 + 17) return;
  const lxa = Math.max(Math.floor(sx - rh) - x0 - 1, 0),
    lxb = Math.min(Math.floor(sx + rh) - x0 + 1, 16);
  const lza = Math.max(Math.floor(sz - rh) - z0 - 1, 0),
    lzb = Math.min(Math.floor(sz + rh) - z0 + 1, 16);
  // y from yb down to ya + 1 (vanilla's order), within the stored band.
  const ya = Math.max(Math.floor(sy - rv) - 1, 1, minY - 1),
    yb = Math.min(Math.floor(sy + rv) + 1, 248, minY + height - 1);
  for (let lx = lxa; lx < lxb; lx++) {
    const q = (x0 + lx + 0.5 - sx) / rh;
    const qq = q * q;
    for (let lz = lza; lz < lzb; lz++) {
      const t = (z0 + lz + 0.5 - sz) / rh;
      const tt = t * t;
      if (qq + tt >= 1) continue;
      for (let y = yb; y > ya; y--) {
        const v = (y - 1 + 0.5 - sy) / rv;
        const skip = rs ? (qq + tt) * rs[y - 1]! + (v * v) / 6 >= 1 : v <= -0.7 || qq + v * v + tt >= 1;
        if (skip) continue;
        const i = cellIndex(lx, y - minY, lz);
        if (out[i] !== BEDROCK) out[i] = y <= LAVA_LEVEL ? LAVA : CAVE_AIR;
      }
    }
  }
}

/**
 * LAKE_LAVA: the LAVA_LAKE decorator (chance 80): with probability 1/8 a lake at y = nextInt(nextInt(248) + 8),
 * kept if y < 63 (sea level) or 1 in 10; LakeFeature: 4..7 overlapping ellipsoids in a 16×8×16 box from 4 below,
 * lava in the lower 4 layers, air above, a stone rim around the lava. (The game's abort on liquid or open edges
 * and its village check are not modelled.)
 */
function lavaLake(seed: number, cx: number, cz: number): { x: number; y: number; z: number; cells: Uint8Array } | null {
  const r = stream(seed, SALT.lake, cx, cz);
  if (r.nextInt(80 / 10) !== 0) return null;
  const x = cx * 16 + r.nextInt(16),
    z = cz * 16 + r.nextInt(16);
  const y = r.nextInt(r.nextInt(256 - 8) + 8);
  if (!(y < 63 || r.nextInt(80 / 8) === 0)) return null;
  if (y <= 4) return null;
  const cells = new Uint8Array(16 * 16 * 8);
  const blobs = r.nextInt(4) + 4;
  for (let j = 0; j < blobs; j++) {
    const d = r.nextDouble() * 6 + 3,
      e = r.nextDouble() * 4 + 2,
      f = r.nextDouble() * 6 + 3;
    const g = r.nextDouble() * (16 - d - 2) + 1 + d / 2,
      h = r.nextDouble() * (8 - e - 4) + 2 + e / 2,
      k = r.nextDouble() * (16 - f - 2) + 1 + f / 2;
    for (let l = 1; l < 15; l++)
      for (let m = 1; m < 15; m++)
        for (let n = 1; n < 7; n++) {
          const o = (l - g) / (d / 2),
            p = (n - h) / (e / 2),
            q = (m - k) / (f / 2);
          if (o * o + p * p + q * q < 1) cells[(l * 16 + m) * 8 + n] = 1;
        }
  }
  return { x, y: y - 4, z, cells };
}

/**
 * SPRING_WATER (50 per chunk, y = nextInt(nextInt(248) + 8)) and SPRING_LAVA (20 per chunk, y =
 * nextInt(nextInt(nextInt(240) + 8) + 8)): SpringFeature puts a fluid source in natural stone (or air) with
 * stone above and below, 4 stone neighbours... of which exactly one side is open (rockCount 4, holeCount 1
 * counts the 4 horizontal neighbours: 3 rock + 1 hole in practice, since a hole is not rock). The simulator
 * lets the source flow (SimWorld's fluid ticks).
 */
const SPRINGS = [
  { state: S.water, count: 50, y: (r: Stream) => r.nextInt(r.nextInt(248) + 8) },
  { state: S.lava, count: 20, y: (r: Stream) => r.nextInt(r.nextInt(r.nextInt(240) + 8) + 8) },
];

/** rand01 < (5 − y) / 5 for the bedrock floor's y 1..4 as hash32 < (5 − y) / 5 · 2^32 (scaling by 2^32 is exact). */
const BEDROCK_HASH_BELOW = [0, 1, 2, 3, 4].map((y) => ((5 - y) / 5) * 4294967296);

/**
 * The world's cache for an underground chunk generated without one (generateChunk alone, blockStateAt): the
 * last such world's, so that chunks asked for one by one share their origins' draws as a world's do.
 */
let aloneUnderground: ChunkFeatureCache | undefined;
/** Scratch: the 3×3 origins of the chunk being generated whose veins reach it. */
const oreOrigins: UndergroundOrigin[] = [];

function generateUndergroundChunk(
  seed: number,
  cx: number,
  cz: number,
  out: Uint16Array,
  options: WorldOptions,
  cache: ChunkFeatureCache | undefined,
  withStartRoom = true,
): void {
  const { minY, height } = WORLD_BANDS.underground;
  if (!cache) {
    if (aloneUnderground?.seed !== seed || aloneUnderground.options !== options) aloneUnderground = new ChunkFeatureCache(seed, options);
    cache = aloneUnderground;
  }
  out.fill(S.stone);
  // Bedrock floor: y 0 always, y 1..4 where y ≤ nextInt(5) (vanilla's rough floor).
  for (let lz = 0; lz < 16; lz++)
    for (let lx = 0; lx < 16; lx++) {
      const x = cx * 16 + lx,
        z = cz * 16 + lz;
      out[cellIndex(lx, -minY, lz)] = BEDROCK;
      for (let y = 1; y <= 4; y++) if (hash32(seed + SALT.bedrock, x, y, z) < BEDROCK_HASH_BELOW[y]!) out[cellIndex(lx, y - minY, lz)] = BEDROCK;
    }
  // Carvers (before features): caves and canyons from origins within 8 chunks; lava below y 11.
  const x0 = cx * 16,
    z0 = cz * 16;
  for (let ox = cx - CARVER_CHUNK_RANGE; ox <= cx + CARVER_CHUNK_RANGE; ox++) {
    for (let oz = cz - CARVER_CHUNK_RANGE; oz <= cz + CARVER_CHUNK_RANGE; oz++) {
      const o = undergroundOrigin(cache, ox, oz, false);
      // carveInto's own test, for all of the origin's ellipsoids at once.
      if (o.xHi < x0 - 1 || o.xLo > x0 + 17 || o.zHi < z0 - 1 || o.zLo > z0 + 17) continue;
      for (let k = 0; k < o.carvers.length; k += CARVE_STRIDE) carveInto(o, k, cx, cz, out);
    }
  }
  const index = (x: number, y: number, z: number) => {
    const lx = x - cx * 16,
      lz = z - cz * 16,
      yy = y - minY;
    return lx < 0 || lx > 15 || lz < 0 || lz > 15 || yy < 0 || yy >= height ? -1 : cellIndex(lx, yy, lz);
  };
  // LAKES stage: lava lakes whose 16×16 box reaches this chunk (origins in this chunk and the three towards −x/−z).
  for (let ox = cx - 1; ox <= cx; ox++)
    for (let oz = cz - 1; oz <= cz; oz++) {
      const lake = lavaLake(seed, ox, oz);
      if (!lake) continue;
      const inLake = (l: number, m: number, n: number) => l >= 0 && l < 16 && m >= 0 && m < 16 && n >= 0 && n < 8 && lake.cells[(l * 16 + m) * 8 + n] === 1;
      for (let l = 0; l < 16; l++)
        for (let m = 0; m < 16; m++)
          for (let n = 0; n < 8; n++) {
            const i = index(lake.x + l, lake.y + n, lake.z + m);
            if (i < 0 || out[i] === S.bedrock) continue;
            if (inLake(l, m, n)) out[i] = n >= 4 ? S.cave_air : S.lava;
            else if (n < 4 && (inLake(l - 1, m, n) || inLake(l + 1, m, n) || inLake(l, m - 1, n) || inLake(l, m + 1, n) || inLake(l, m, n - 1))) {
              if (out[i] !== S.cave_air && out[i] !== S.lava) out[i] = S.stone;
            }
          }
    }
  // UNDERGROUND_ORES: veins from this chunk and its neighbours (a vein reaches ≤ 8 blocks from its origin), ore
  // by ore, each ore's origins in x-then-z order: a later ore replaces an earlier one only where that one is stone.
  for (let j = 0; j < 9; j++) oreOrigins[j] = undergroundOrigin(cache, cx + Math.floor(j / 3) - 1, cz + (j % 3) - 1, true);
  for (let oi = 0; oi < ORES.length; oi++) {
    const state = ORES[oi]!.state;
    for (let j = 0; j < 9; j++) {
      const o = oreOrigins[j]!;
      // This chunk is origin j's bucket 8 − j (the chunk (ox + i − 1, oz + k − 1) is bucket 3i + k).
      const spheres = o.oreSpheres!,
        group = (8 - j) * ORES.length + oi;
      for (let k = o.oreStarts![group]!, end = o.oreStarts![group + 1]!; k < end; k += 4) {
        const ex = spheres[k]!,
          ey = spheres[k + 1]!,
          ez = spheres[k + 2]!,
          d = spheres[k + 3]!;
        // Clipped to this chunk column and the stored band. The sum u² + w² + v² is the same double as
        // vanilla's left-to-right one: (u² + w²) is computed once per row.
        const xa = Math.max(Math.floor(ex - d), x0),
          xb = Math.min(Math.floor(ex + d), x0 + 15);
        const za = Math.max(Math.floor(ez - d), z0),
          zb = Math.min(Math.floor(ez + d), z0 + 15);
        const ya = Math.max(Math.floor(ey - d), minY),
          yb = Math.min(Math.floor(ey + d), minY + height - 1);
        for (let x = xa; x <= xb; x++) {
          const u = (x + 0.5 - ex) / d;
          const uu = u * u;
          if (uu >= 1) continue;
          for (let y = ya; y <= yb; y++) {
            const w = (y + 0.5 - ey) / d;
            const uw = uu + w * w;
            if (uw >= 1) continue;
            const row = cellIndex(x - x0, y - minY, 0);
            for (let z = za; z <= zb; z++) {
              const v = (z + 0.5 - ez) / d;
              if (uw + v * v >= 1) continue;
              const i = row + (z - z0) * 16;
              const cur = out[i]!;
              if (cur === STONE || cur === GRANITE || cur === DIORITE || cur === ANDESITE) out[i] = state;
            }
          }
        }
      }
    }
  }
  for (let j = 0; j < 9; j++) {
    const o = oreOrigins[j]!;
    if (++o.oreUses < 9) continue;
    o.oreSpheres = o.oreStarts = null;
    o.oreUses = 0;
  }
  // VEGETAL_DECORATION: springs, in this chunk only (their flow is the simulator's).
  SPRINGS.forEach((spring, si) => {
    const r = stream(seed, SALT.spring + si * 31, cx, cz);
    for (let k = 0; k < spring.count; k++) {
      const x = cx * 16 + r.nextInt(16),
        z = cz * 16 + r.nextInt(16),
        y = spring.y(r);
      const lx = x - cx * 16,
        lz = z - cz * 16;
      if (y < 1 || y + 1 >= minY + height || lx < 1 || lx > 14 || lz < 1 || lz > 14) continue; // neighbours must be in this chunk
      const at = (dx: number, dy: number, dz: number) => out[cellIndex(lx + dx, y + dy - minY, lz + dz)]!;
      if (!NATURAL_STONE.has(at(0, 1, 0)) || !NATURAL_STONE.has(at(0, -1, 0))) continue;
      const here = at(0, 0, 0);
      if (here !== S.cave_air && !NATURAL_STONE.has(here)) continue;
      let rock = 0,
        hole = 0;
      for (const [dx, dz] of [
        [1, 0],
        [-1, 0],
        [0, 1],
        [0, -1],
      ] as const) {
        const s = at(dx, 0, dz);
        if (NATURAL_STONE.has(s)) rock++;
        else if (s === S.cave_air) hole++;
      }
      if (rock === 3 && hole === 1) out[cellIndex(lx, y - minY, lz)] = spring.state;
    }
  });
  // The agent's start room, carved last: no spring above takes it for its opening (vanilla has no such room).
  if (!withStartRoom) return;
  const spawn = undergroundSpawn(seed, options, cache);
  const sy = Math.floor(spawn.y);
  for (let x = Math.floor(spawn.x) - SPAWN_ROOM; x <= Math.floor(spawn.x) + SPAWN_ROOM; x++) {
    for (let z = Math.floor(spawn.z) - SPAWN_ROOM; z <= Math.floor(spawn.z) + SPAWN_ROOM; z++) {
      for (let y = sy - 1; y <= sy + 1; y++) {
        const i = index(x, y, z);
        if (i >= 0) out[i] = y === sy - 1 ? S.stone : S.cave_air; // a solid floor under the feet, two cells of air
      }
    }
  }
}

/**
 * Fills `out` (length CHUNK_CELLS(kind)) with chunk column (cx, cz) of the world (kind, seed, options). A caller
 * generating many chunks of one world passes that world's `cache` (the same cells, less work).
 */
export function generateChunk(
  kind: WorldKind,
  seed: number,
  cx: number,
  cz: number,
  out: Uint16Array = new Uint16Array(CHUNK_CELLS(kind)),
  options: WorldOptions = VANILLA_WORLD,
  cache?: ChunkFeatureCache,
): Uint16Array {
  if (cache && (cache.seed !== seed || cache.options !== options))
    throw new Error(`generateChunk: a cache of world ${cache.seed} used for world ${seed} or other options`);
  if (kind === 'plains') generatePlainsChunk(seed, cx, cz, out, options, cache);
  else generateUndergroundChunk(seed, cx, cz, out, options, cache);
  return out;
}

/**
 * Block state id at (x, y, z) (integers) of the world (kind, seed). Generates the whole chunk column, so
 * callers asking for many cells should use `generateChunk` (flying-squid's generator does).
 */
export function blockStateAt(kind: WorldKind, seed: number, x: number, y: number, z: number, options: WorldOptions = VANILLA_WORLD): number {
  const band = WORLD_BANDS[kind];
  if (y < band.minY) return kind === 'underground' ? S.bedrock : S.stone;
  if (y >= band.minY + band.height) return band.above;
  const chunk = generateChunk(kind, seed, Math.floor(x / 16), Math.floor(z / 16), undefined, options);
  return chunk[cellIndex(x - Math.floor(x / 16) * 16, y - band.minY, z - Math.floor(z / 16) * 16)]!;
}

// ---- what a world can hold ----

/** The monsters that spawn underground (BiomeDefaultFeatures.monsters of the overworld; mobs.ts weighs them). */
export const UNDERGROUND_MONSTERS = ['spider', 'zombie', 'skeleton', 'creeper'] as const;

/**
 * Every block and mob a world of each kind can hold: what the generator places (worldgen.test.ts checks
 * generated chunks against it), what its fluids make (obsidian and cobblestone where lava meets water) and
 * what spawns in it. A task's success rule may name more (approach-tree counts birch logs, as vanilla's
 * logs tag does), but plains here grow oak only (README, "The simulated world"): the analyzer proposes only
 * target names the task's world can hold.
 */
export const WORLD_CONTENTS: Readonly<Record<WorldKind, { blocks: readonly string[]; mobs: readonly string[] }>> = {
  plains: {
    blocks: [
      'air',
      'grass_block',
      'dirt',
      'stone',
      'grass',
      'tall_grass',
      'dandelion',
      'poppy',
      'orange_tulip',
      'red_tulip',
      'pink_tulip',
      'white_tulip',
      'azure_bluet',
      'oxeye_daisy',
      'cornflower',
      'oak_log',
      'oak_leaves',
      'bee_nest',
    ],
    mobs: PLAINS_MOBS,
  },
  underground: {
    blocks: [
      'air',
      'cave_air',
      'stone',
      'granite',
      'diorite',
      'andesite',
      'dirt',
      'gravel',
      'bedrock',
      'coal_ore',
      'iron_ore',
      'gold_ore',
      'redstone_ore',
      'lapis_ore',
      'diamond_ore',
      'lava',
      'water',
      'obsidian',
      'cobblestone',
    ],
    mobs: UNDERGROUND_MONSTERS,
  },
};

/** Whether a world of this kind can hold a block or mob of this name. */
export function worldCanHold(kind: WorldKind, name: string): boolean {
  const contents = WORLD_CONTENTS[kind];
  return contents.blocks.includes(name) || contents.mobs.includes(name);
}

// ---- spawns ----

export interface SpawnPoint {
  /** Feet position (block centre). */
  x: number;
  y: number;
  z: number;
  /** Initial yaw, mineflayer convention (radians, 0 = facing −z, increasing turns left). */
  yaw: number;
}

/**
 * LavaFluid.getDropOff: 2 in the overworld (getSlopeFindDistance 2, getTickDelay 30): a source's amount 8 runs
 * 6, 4, 2 — three blocks across a level — and falling lava starts again at 8 below.
 */
export const LAVA_FLOW_REACH = 3;
/**
 * ServerPlayer.fudgeSpawnLocation tries positions in the spawn area until PlayerRespawnLogic
 * .getOverworldRespawnPos accepts one (it refuses a column with fluid at the spawn); this many, then the last.
 */
const SPAWN_TRIES = 64;
/** The underground start height (the task's startY). */
const UNDERGROUND_START_Y = 11;
const undergroundSpawns = new Map<string, SpawnPoint>();

/**
 * The underground start: the first of a seeded series of positions at y 11 where, in the world as generated
 * around it before its room is carved, no fluid fills the room's cells (getOverworldRespawnPos) and no lava
 * lies within LAVA_FLOW_REACH blocks of the room, level with it or anywhere above (lava that falls starts
 * again): a player is never put where lava runs onto them at once. The world itself is not changed — only
 * where in it the agent starts.
 */
function undergroundSpawn(seed: number, options: WorldOptions = VANILLA_WORLD, cache?: ChunkFeatureCache): SpawnPoint {
  const key = `${seed}:${options.oreDensity}`; // ores decide which springs find natural stone around them
  let spawn = undergroundSpawns.get(key);
  if (spawn) return spawn;
  const yaw = ((hash32(seed + SALT.spawn, 3) % 24) * Math.PI) / 12;
  for (let attempt = 0; ; attempt++) {
    const x = (hash32(seed + SALT.spawn, 1, attempt) % 64) - 32,
      z = (hash32(seed + SALT.spawn, 2, attempt) % 64) - 32;
    spawn = { x: x + 0.5, y: UNDERGROUND_START_Y, z: z + 0.5, yaw };
    if (attempt + 1 >= SPAWN_TRIES || undergroundStartSafe(seed, x, z, options, cache)) break;
  }
  if (undergroundSpawns.size > 4096) undergroundSpawns.clear();
  undergroundSpawns.set(key, spawn);
  return spawn;
}

/** Whether the start room around block column (x, z) at y 11 is free of fluid and out of lava's reach (see undergroundSpawn). */
function undergroundStartSafe(seed: number, x: number, z: number, options: WorldOptions, cache: ChunkFeatureCache | undefined): boolean {
  const { minY, height } = WORLD_BANDS.underground;
  const r = SPAWN_ROOM + LAVA_FLOW_REACH;
  const chunks = new Map<number, Uint16Array>();
  const stateAt = (bx: number, y: number, bz: number) => {
    const cx = Math.floor(bx / 16),
      cz = Math.floor(bz / 16);
    const k = chunkKey(cx, cz);
    let cells = chunks.get(k);
    if (!cells) {
      cells = new Uint16Array(CHUNK_CELLS('underground'));
      generateUndergroundChunk(seed, cx, cz, cells, options, cache, false);
      chunks.set(k, cells);
    }
    return cells[cellIndex(bx - cx * 16, y - minY, bz - cz * 16)]!;
  };
  const sy = UNDERGROUND_START_Y;
  for (let dx = -r; dx <= r; dx++) {
    for (let dz = -r; dz <= r; dz++) {
      const inRoom = Math.abs(dx) <= SPAWN_ROOM && Math.abs(dz) <= SPAWN_ROOM;
      for (let y = sy; y < minY + height; y++) {
        const b = stateToBlock[stateAt(x + dx, y, z + dz)];
        if (b === LAVA_BLOCK) return false;
        if (inRoom && y <= sy + 1 && b === WATER_BLOCK) return false;
      }
    }
  }
  return true;
}

/**
 * Where the agent starts. Plains: on the surface near the origin, on a column with nothing solid at the
 * feet or head (plants are fine). Underground: in a small room carved at y = `startY` (11 for the task).
 * `world`, the same world as generated and not yet changed, answers the cells instead of a chunk generated
 * for them alone (the simulator's world needs the spawn's chunks anyway).
 */
export function spawnPoint(
  kind: WorldKind,
  seed: number,
  options: WorldOptions = VANILLA_WORLD,
  world?: { stateAt(x: number, y: number, z: number): number },
): SpawnPoint {
  if (kind === 'underground') return undergroundSpawn(seed, options);
  const yaw = ((hash32(seed + SALT.spawn, 3) % 24) * Math.PI) / 12;
  const clear = (s: number) => s === S.air || isAirOrPlant(s) || PLAINS_FLOWERS.includes(s);
  const stateAt = (x: number, y: number, z: number) => (world ? world.stateAt(x, y, z) : blockStateAt('plains', seed, x, y, z, options));
  for (let attempt = 0; ; attempt++) {
    const x = (hash32(seed + SALT.spawn, 4, attempt) % 16) - 8;
    const z = (hash32(seed + SALT.spawn, 5, attempt) % 16) - 8;
    const top = plainsSurfaceY(seed, x, z);
    const feet = stateAt(x, top + 1, z);
    const head = stateAt(x, top + 2, z);
    if ((clear(feet) && clear(head)) || attempt > 50) return { x: x + 0.5, y: top + 1, z: z + 0.5, yaw };
  }
}
