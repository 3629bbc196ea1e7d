// Deterministic world generation from a seed. Every function here is pure in (kind, seed, coordinates), so
// the simulator (which generates 16×16 chunk columns lazily) and the mineflayer backend's flying-squid
// custom generator produce the same world: `generateChunk(kind, seed, cx, cz)` fills one chunk column of
// block state ids for the stored height band, and `blockStateAt(kind, seed, x, y, z)` answers any single
// coordinate (outside the band it returns the band's fill: stone below/above underground, air above plains).
import { MOB_MAX_HEALTH, PLAINS_MOBS, S, type PlainsMob } from './registry';
import type { WorldKind } from '../../tasks';
import { hash32 } from '../../seeds';

/** The height band each world kind stores: y in [minY, minY + height). */
export const WORLD_BANDS: Readonly<Record<WorldKind, { minY: number; height: number; below: number; above: number }>> = {
  plains: { minY: 48, height: 48, below: S.stone, above: S.air },
  underground: { minY: 0, height: 48, below: S.bedrock, above: S.stone },
};

export const CHUNK_CELLS = (kind: WorldKind) => 16 * 16 * WORLD_BANDS[kind].height;
/** Index of (local x, y - minY, local z) in a chunk column array. */
export const cellIndex = (lx: number, yy: number, lz: number) => (yy * 16 + lz) * 16 + lx;

// ---- hashing and noise (integer hashing; identical results on every platform) ----

/** Uniform in [0, 1). */
export const rand01 = (a: number, b = 0, c = 0, d = 0) => hash32(a, b, c, d) / 4294967296;

const smooth = (t: number) => t * t * (3 - 2 * t);
/** 2D value noise in [-1, 1] with lattice spacing `scale`. */
function noise2(seed: number, x: number, z: number, scale: number): number {
  const fx = x / scale, fz = z / scale;
  const ix = Math.floor(fx), iz = Math.floor(fz);
  const tx = smooth(fx - ix), tz = smooth(fz - iz);
  const a = rand01(seed, ix, iz), b = rand01(seed, ix + 1, iz);
  const c = rand01(seed, ix, iz + 1), d = rand01(seed, ix + 1, iz + 1);
  return (a + (b - a) * tx + (c - a) * tz + (a - b - c + d) * tx * tz) * 2 - 1;
}
// Salts so that different features draw independent numbers from one seed.
const SALT = { height: 11, detail: 12, plant: 13, tree: 14, spawn: 15, mobs: 16, bedrock: 17, cave1: 18, cave2: 19, cave3: 20, ore: 21 };

// ---- plains ----

/** Height of the grass surface (the grass_block's y) of plains at column (x, z): gentle, about 62..67. */
export function plainsSurfaceY(seed: number, x: number, z: number): number {
  return 64 + Math.floor(2.6 * noise2(seed + SALT.height, x, z, 40) + 0.9 * noise2(seed + SALT.detail, x, z, 11));
}

const FLOWERS = [S.dandelion, S.poppy, S.azure_bluet, S.oxeye_daisy, S.cornflower];
/** Probability that a chunk holds a tree: sparse, as in vanilla plains (trees are what approach-tree looks for). */
const TREE_CHANCE_PER_CHUNK = 0.35;

interface Tree { x: number; z: number; base: number; height: number; birch: boolean; leafSalt: number }

/** The tree rooted in chunk (cx, cz), if any. Trunks stay 2 blocks inside their chunk; leaves may cross. */
function treeOfChunk(seed: number, cx: number, cz: number): Tree | null {
  if (rand01(seed + SALT.tree, cx, cz, 0) >= TREE_CHANCE_PER_CHUNK) return null;
  const x = cx * 16 + 2 + (hash32(seed + SALT.tree, cx, cz, 1) % 12);
  const z = cz * 16 + 2 + (hash32(seed + SALT.tree, cx, cz, 2) % 12);
  const birch = rand01(seed + SALT.tree, cx, cz, 3) < 0.2;
  const height = (birch ? 5 : 4) + (hash32(seed + SALT.tree, cx, cz, 4) % 3);
  return { x, z, base: plainsSurfaceY(seed, x, z) + 1, height, birch, leafSalt: hash32(seed + SALT.tree, cx, cz, 5) };
}

function generatePlainsChunk(seed: number, cx: number, cz: number, out: Uint16Array): void {
  const { minY, height } = WORLD_BANDS.plains;
  out.fill(S.air);
  for (let lz = 0; lz < 16; lz++) {
    for (let lx = 0; lx < 16; lx++) {
      const x = cx * 16 + lx, z = cz * 16 + lz;
      const top = plainsSurfaceY(seed, x, z);
      for (let y = minY; y <= top && y < minY + height; y++) {
        out[cellIndex(lx, y - minY, lz)] = y === top ? S.grass_block : y >= top - 3 ? S.dirt : S.stone;
      }
      const r = rand01(seed + SALT.plant, x, z);
      if (top + 1 < minY + height && r < 0.12) {
        out[cellIndex(lx, top + 1 - minY, lz)] = r < 0.015 ? FLOWERS[hash32(seed + SALT.plant, x, z, 1) % FLOWERS.length]! : S.grass;
      }
    }
  }
  for (let dcx = -1; dcx <= 1; dcx++) {
    for (let dcz = -1; dcz <= 1; dcz++) {
      const t = treeOfChunk(seed, cx + dcx, cz + dcz);
      if (t) placeTree(t, cx, cz, out);
    }
  }
}

function placeTree(t: Tree, cx: number, cz: number, out: Uint16Array): void {
  const { minY, height } = WORLD_BANDS.plains;
  const log = t.birch ? S.birch_log : S.oak_log;
  const leaves = t.birch ? S.birch_leaves : S.oak_leaves;
  const set = (x: number, y: number, z: number, s: number, onlyAir: boolean) => {
    const lx = x - cx * 16, lz = z - cz * 16, yy = y - minY;
    if (lx < 0 || lx > 15 || lz < 0 || lz > 15 || yy < 0 || yy >= height) return;
    const i = cellIndex(lx, yy, lz);
    if (onlyAir && out[i] !== S.air && out[i] !== S.grass) return;
    out[i] = s;
  };
  const top = t.base + t.height; // first y above the trunk
  // Vanilla's blob foliage: two 5×5 layers, then two 3×3 layers, corners randomly trimmed.
  for (let dy = -3; dy <= 0; dy++) {
    const radius = dy <= -2 ? 2 : 1;
    for (let dx = -radius; dx <= radius; dx++) {
      for (let dz = -radius; dz <= radius; dz++) {
        const corner = Math.abs(dx) === radius && Math.abs(dz) === radius;
        if (corner && (dy === 0 || hash32(t.leafSalt, dx, dy, dz) % 2 === 0)) continue;
        set(t.x + dx, top + dy, t.z + dz, leaves, true);
      }
    }
  }
  for (let y = t.base; y < top; y++) set(t.x, y, t.z, log, false);
}

// ---- underground ----

/** 1.16 ore features: veins per chunk, vein size, and the y range (lapis: triangular around 16). */
const ORES: readonly { state: number; count: number; size: number; minY: number; maxY: number; triangular?: boolean }[] = [
  { state: S.dirt, count: 10, size: 33, minY: 0, maxY: 255 },
  { state: S.gravel, count: 8, size: 33, minY: 0, maxY: 255 },
  { state: S.granite, count: 10, size: 33, minY: 0, maxY: 79 },
  { state: S.diorite, count: 10, size: 33, minY: 0, maxY: 79 },
  { state: S.andesite, count: 10, size: 33, minY: 0, maxY: 79 },
  { state: S.coal_ore, count: 20, size: 17, minY: 0, maxY: 127 },
  { state: S.iron_ore, count: 20, size: 9, minY: 0, maxY: 63 },
  { state: S.gold_ore, count: 2, size: 9, minY: 0, maxY: 31 },
  { state: S.redstone_ore, count: 8, size: 8, minY: 0, maxY: 15 },
  { state: S.diamond_ore, count: 1, size: 8, minY: 0, maxY: 15 },
  { state: S.lapis_ore, count: 1, size: 7, minY: 0, maxY: 32, triangular: true },
];
/** In 1.16 cave carvers fill with lava at and below this y. */
export const LAVA_LEVEL = 10;
/** Half extent of the room carved around the underground spawn (x/z), so the agent starts free. */
const SPAWN_ROOM = 1;

/**
 * 3D value noise in [-1, 1] (lattice spacing `scale`, vertically `yScale`, smoothstep-interpolated) over one
 * chunk column's cells (y in [minY, minY + height)); the lattice values are hashed once per chunk.
 */
function noiseField3(seed: number, cx: number, cz: number, minY: number, height: number, scale: number, yScale: number): Float32Array {
  const x0 = Math.floor((cx * 16) / scale), z0 = Math.floor((cz * 16) / scale), y0 = Math.floor(minY / yScale);
  const nx = Math.floor((cx * 16 + 15) / scale) - x0 + 2, nz = Math.floor((cz * 16 + 15) / scale) - z0 + 2;
  const ny = Math.floor((minY + height - 1) / yScale) - y0 + 2;
  const lattice = new Float64Array(nx * ny * nz);
  for (let i = 0; i < nx; i++) for (let j = 0; j < ny; j++) for (let k = 0; k < nz; k++) lattice[(i * ny + j) * nz + k] = rand01(seed, x0 + i, y0 + j, z0 + k);
  const out = new Float32Array(16 * 16 * height);
  for (let yy = 0; yy < height; yy++) {
    const fy = (minY + yy) / yScale, iy = Math.floor(fy), ty = smooth(fy - iy), j = iy - y0;
    for (let lz = 0; lz < 16; lz++) {
      const fz = (cz * 16 + lz) / scale, iz = Math.floor(fz), tz = smooth(fz - iz), k = iz - z0;
      for (let lx = 0; lx < 16; lx++) {
        const fx = (cx * 16 + lx) / scale, ix = Math.floor(fx), tx = smooth(fx - ix), i = ix - x0;
        // Corners of the lattice cell (no per-cell closures: this loop runs for every block of the chunk).
        const c000 = (i * ny + j) * nz + k, c100 = c000 + ny * nz, c010 = c000 + nz, c110 = c100 + nz;
        const x00 = lattice[c000]! + (lattice[c100]! - lattice[c000]!) * tx;
        const x10 = lattice[c010]! + (lattice[c110]! - lattice[c010]!) * tx;
        const x01 = lattice[c000 + 1]! + (lattice[c100 + 1]! - lattice[c000 + 1]!) * tx;
        const x11 = lattice[c010 + 1]! + (lattice[c110 + 1]! - lattice[c010 + 1]!) * tx;
        const a = x00 + (x10 - x00) * ty, b = x01 + (x11 - x01) * ty;
        out[cellIndex(lx, yy, lz)] = (a + (b - a) * tz) * 2 - 1;
      }
    }
  }
  return out;
}

/**
 * Cave cells of a chunk column: two thin noise shells intersect in tunnels ("spaghetti"); a third, sparse
 * field opens rooms.
 */
function caveMask(seed: number, cx: number, cz: number, minY: number, height: number): Uint8Array {
  const a = noiseField3(seed + SALT.cave1, cx, cz, minY, height, 14, 9);
  const b = noiseField3(seed + SALT.cave2, cx, cz, minY, height, 14, 9);
  const c = noiseField3(seed + SALT.cave3, cx, cz, minY, height, 20, 10);
  const mask = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) mask[i] = a[i]! * a[i]! + b[i]! * b[i]! < 0.012 || c[i]! > 0.72 ? 1 : 0;
  return mask;
}

function generateUndergroundChunk(seed: number, cx: number, cz: number, out: Uint16Array): void {
  const { minY, height } = WORLD_BANDS.underground;
  out.fill(S.stone);
  // Ores first (they replace stone), from this chunk and its neighbours since veins cross borders.
  for (let dcx = -1; dcx <= 1; dcx++) {
    for (let dcz = -1; dcz <= 1; dcz++) {
      const ocx = cx + dcx, ocz = cz + dcz;
      ORES.forEach((ore, oi) => {
        const radius = ore.size >= 17 ? 2 : 1;
        for (let v = 0; v < ore.count; v++) {
          const a = ocx * 64 + oi, b = ocz * 64 + v;
          const x0 = ocx * 16 + (hash32(seed + SALT.ore, a, b, 0) % 16), z0 = ocz * 16 + (hash32(seed + SALT.ore, a, b, 1) % 16);
          const span = ore.maxY - ore.minY + 1;
          const y0 = ore.triangular ? 16 + (hash32(seed + SALT.ore, a, b, 2) % 16) - (hash32(seed + SALT.ore, a, b, 3) % 16) : ore.minY + (hash32(seed + SALT.ore, a, b, 2) % span);
          if (y0 < minY - radius || y0 >= minY + height + radius) continue;
          if (x0 < cx * 16 - radius || x0 > cx * 16 + 15 + radius || z0 < cz * 16 - radius || z0 > cz * 16 + 15 + radius) continue;
          for (let k = 0; k < ore.size; k++) {
            const r = hash32(seed + SALT.ore, a, b, 10 + k);
            const x = x0 + ((r & 7) % (2 * radius + 1)) - radius;
            const y = y0 + (((r >>> 3) & 7) % (2 * radius + 1)) - radius;
            const z = z0 + (((r >>> 6) & 7) % (2 * radius + 1)) - radius;
            const lx = x - cx * 16, lz = z - cz * 16, yy = y - minY;
            // Clipped to the ore's y range, so e.g. no diamond ore at y ≥ 16.
            if (lx < 0 || lx > 15 || lz < 0 || lz > 15 || yy < 0 || yy >= height || y > ore.maxY || y < ore.minY) continue;
            const i = cellIndex(lx, yy, lz);
            if (out[i] === S.stone) out[i] = ore.state;
          }
        }
      });
    }
  }
  const spawn = undergroundSpawn(seed);
  const caves = caveMask(seed, cx, cz, minY, height);
  for (let lz = 0; lz < 16; lz++) {
    for (let lx = 0; lx < 16; lx++) {
      const x = cx * 16 + lx, z = cz * 16 + lz;
      const inRoomColumn = Math.abs(x - Math.floor(spawn.x)) <= SPAWN_ROOM && Math.abs(z - Math.floor(spawn.z)) <= SPAWN_ROOM;
      for (let yy = 0; yy < height; yy++) {
        const y = minY + yy;
        const i = cellIndex(lx, yy, lz);
        // Bedrock floor: y 0 always, y 1..4 with falling probability (vanilla's rough floor).
        if (y === 0 || (y <= 4 && rand01(seed + SALT.bedrock, x, y, z) < (5 - y) / 5)) {
          out[i] = S.bedrock;
          continue;
        }
        const sy = Math.floor(spawn.y);
        if (inRoomColumn && y >= sy - 1 && y <= sy + 1) {
          out[i] = y === sy - 1 ? S.stone : S.cave_air; // a solid floor under the feet, two cells of air
          continue;
        }
        if (y < 44 && caves[i] === 1) out[i] = y <= LAVA_LEVEL ? S.lava : S.cave_air;
      }
    }
  }
}

/** Fills `out` (length CHUNK_CELLS(kind)) with chunk column (cx, cz) of the world (kind, seed). */
export function generateChunk(kind: WorldKind, seed: number, cx: number, cz: number, out = new Uint16Array(CHUNK_CELLS(kind))): Uint16Array {
  if (kind === 'plains') generatePlainsChunk(seed, cx, cz, out);
  else generateUndergroundChunk(seed, cx, cz, out);
  return out;
}

/**
 * Block state id at (x, y, z) (integers) of the world (kind, seed). Generates the whole chunk column, so
 * callers asking for many cells should use `generateChunk` (flying-squid's generator does).
 */
export function blockStateAt(kind: WorldKind, seed: number, x: number, y: number, z: number): number {
  const band = WORLD_BANDS[kind];
  if (y < band.minY) return kind === 'underground' ? S.bedrock : S.stone;
  if (y >= band.minY + band.height) return band.above;
  const chunk = generateChunk(kind, seed, Math.floor(x / 16), Math.floor(z / 16));
  return chunk[cellIndex(x - Math.floor(x / 16) * 16, y - band.minY, z - Math.floor(z / 16) * 16)]!;
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

function undergroundSpawn(seed: number): SpawnPoint {
  const x = (hash32(seed + SALT.spawn, 1) % 64) - 32 + 0.5;
  const z = (hash32(seed + SALT.spawn, 2) % 64) - 32 + 0.5;
  return { x, y: 11, z, yaw: ((hash32(seed + SALT.spawn, 3) % 24) * Math.PI) / 12 };
}

/**
 * Where the agent starts. Plains: on the surface near the origin, on a column with nothing solid at the
 * feet or head (plants are fine). Underground: in a small room carved at y = `startY` (11 for the task).
 */
export function spawnPoint(kind: WorldKind, seed: number): SpawnPoint {
  if (kind === 'underground') return undergroundSpawn(seed);
  const yaw = ((hash32(seed + SALT.spawn, 3) % 24) * Math.PI) / 12;
  for (let attempt = 0; ; attempt++) {
    const x = (hash32(seed + SALT.spawn, 4, attempt) % 16) - 8;
    const z = (hash32(seed + SALT.spawn, 5, attempt) % 16) - 8;
    const top = plainsSurfaceY(seed, x, z);
    const feet = blockStateAt('plains', seed, x, top + 1, z);
    const head = blockStateAt('plains', seed, x, top + 2, z);
    const clear = (s: number) => s === S.air || s === S.grass || FLOWERS.includes(s);
    if ((clear(feet) && clear(head)) || attempt > 50) return { x: x + 0.5, y: top + 1, z: z + 0.5, yaw };
  }
}

export interface MobSpawn {
  type: PlainsMob;
  x: number;
  y: number;
  z: number;
  maxHealth: number;
}

/**
 * The animals of a plains world: 10 groups of 2–4 of one species, 10..80 m from the origin, species in
 * rotation so that every species is present. Positions are feet positions on the surface.
 */
export function mobSpawns(seed: number): MobSpawn[] {
  const out: MobSpawn[] = [];
  for (let g = 0; g < 10; g++) {
    const type = PLAINS_MOBS[(g + (hash32(seed + SALT.mobs, 99) % 4)) % 4]!;
    const angle = rand01(seed + SALT.mobs, g, 0) * Math.PI * 2;
    const dist = 10 + rand01(seed + SALT.mobs, g, 1) * 70;
    const gx = Math.cos(angle) * dist, gz = Math.sin(angle) * dist;
    const n = 2 + (hash32(seed + SALT.mobs, g, 2) % 3);
    for (let k = 0; k < n; k++) {
      const x = Math.floor(gx + rand01(seed + SALT.mobs, g, 3, k) * 6 - 3) + 0.5;
      const z = Math.floor(gz + rand01(seed + SALT.mobs, g, 4, k) * 6 - 3) + 0.5;
      out.push({ type, x, y: plainsSurfaceY(seed, Math.floor(x), Math.floor(z)) + 1, z, maxHealth: MOB_MAX_HEALTH[type]! });
    }
  }
  return out;
}
