// The policy's observation: one fixed vector, the same for every task, holding only what a player could see
// or feel: an egocentric LiDAR-like grid (class and distance of the first thing along each of 9 × 5 rays
// across the field of view), the nearest visible thing of each class, the inventory, health, food, the
// facing, the last step's motion and the last action. No task target, no bearing to anything out of view,
// no memory of past sightings, no hazard map: what the task needs, the policy has to find in the view.
// Both backends call `writeFeatures` with the same view (observe.ts) on their own world, so features match.
import { GAME_FACTS } from '../../schema';
import { DEG, EYE_HEIGHT, LIDAR_COLUMNS, LIDAR_ROWS, lidarPitch, lidarYaw, type ViewEntity, type ViewPose, type ViewResult } from './observe';
import { BLOCK_COUNT, MOB_NAMES, NAME_COUNT, blockNames, mcData, stateToBlock } from './registry';

/** Classes of the LiDAR grid and of the nearest-thing slots (block classes from minecraft-data's material). */
export const FEATURE_CLASSES = ['ground', 'stone', 'wood', 'leaves', 'ore', 'plant', 'water', 'lava', 'other_block', 'animal', 'hostile'] as const;
export type FeatureClass = (typeof FEATURE_CLASSES)[number];
const C = Object.fromEntries(FEATURE_CLASSES.map((c, i) => [c, i])) as Record<FeatureClass, number>;
const CLASS_COUNT = FEATURE_CLASSES.length;

function blockClass(name: string): number {
  const b = mcData.blocksByName[name];
  if (!b || name === 'air' || name === 'cave_air' || name === 'void_air') return -1;
  if (name === 'water' || name === 'bubble_column') return C.water;
  if (name === 'lava') return C.lava;
  if (name.endsWith('_ore') || name === 'ancient_debris') return C.ore;
  if (name.endsWith('_leaves')) return C.leaves;
  const material = (b as { material?: string }).material;
  if (material === 'wood') return C.wood;
  if (material === 'dirt' || (material === 'plant' && b.boundingBox === 'block')) return C.ground; // coarse dirt, podzol
  if (material === 'plant') return C.plant;
  if (material === 'rock') return C.stone;
  return C.other_block;
}

/** Feature class of each observable name (block id, then mob), −1 for the airs. */
export const nameClass = new Int8Array(NAME_COUNT).fill(-1);
for (let i = 0; i < BLOCK_COUNT; i++) nameClass[i] = blockNames[i] ? blockClass(blockNames[i]!) : -1;
MOB_NAMES.forEach((m, i) => (nameClass[BLOCK_COUNT + i] = mcData.entitiesByName[m]?.category === 'Hostile mobs' ? C.hostile : C.animal));

/** Inventory slots: item classes counted together (an item in none of them counts as `other`). */
export const INVENTORY_CLASSES = [
  'log',
  'planks',
  'stick',
  'crafting_table',
  'cobblestone',
  'dirt',
  'coal',
  'iron',
  'diamond',
  'pickaxe',
  'sword',
  'food',
  'mob_drop',
  'other',
] as const;
const FOODS = new Set([
  'beef',
  'porkchop',
  'mutton',
  'chicken',
  'cooked_beef',
  'cooked_porkchop',
  'cooked_mutton',
  'cooked_chicken',
  'apple',
  'bread',
  'carrot',
  'potato',
  'baked_potato',
  'rabbit',
  'cooked_rabbit',
]);
function itemClass(item: string): number {
  const k = (c: (typeof INVENTORY_CLASSES)[number]) => INVENTORY_CLASSES.indexOf(c);
  if (item.endsWith('_log') || item.endsWith('_wood') || item.endsWith('_stem') || item.endsWith('_hyphae')) return k('log');
  if (item.endsWith('_planks')) return k('planks');
  if (item === 'stick') return k('stick');
  if (item === 'crafting_table') return k('crafting_table');
  if (item === 'cobblestone' || item === 'stone' || item === 'granite' || item === 'diorite' || item === 'andesite') return k('cobblestone');
  if (item === 'dirt' || item === 'grass_block' || item === 'gravel' || item === 'sand') return k('dirt');
  if (item === 'coal' || item === 'coal_ore' || item === 'charcoal') return k('coal');
  if (item === 'iron_ore' || item === 'iron_ingot' || item === 'iron_nugget') return k('iron');
  if (item === 'diamond' || item === 'diamond_ore') return k('diamond');
  if (item.endsWith('_pickaxe')) return k('pickaxe');
  if (item.endsWith('_sword')) return k('sword');
  if (FOODS.has(item)) return k('food');
  if (item === 'leather' || item === 'feather' || item.endsWith('_wool') || item === 'egg') return k('mob_drop');
  return k('other');
}
const itemClassCache = new Map<string, number>();

const FOV_YAW = GAME_FACTS.fovYawDeg * DEG;
const FOV_PITCH = GAME_FACTS.fovPitchDeg * DEG;
const VIEW = GAME_FACTS.viewDistance;
const MOTION = 3;
const SCALARS = 10;

/** One named block of the feature vector: `length` values from `offset`. */
export interface FeatureField {
  name: string;
  offset: number;
  length: number;
  description: string;
}
/** The policy's feature layout: the same for every task and both backends. */
export interface FeatureSpec {
  size: number;
  fields: FeatureField[];
}

function buildSpec(): FeatureSpec {
  const fields: FeatureField[] = [];
  let offset = 0;
  const add = (name: string, length: number, description: string) => {
    fields.push({ name, offset, length, description });
    offset += length;
  };
  add(
    'lidar',
    LIDAR_COLUMNS * LIDAR_ROWS * (1 + CLASS_COUNT),
    `${LIDAR_COLUMNS}×${LIDAR_ROWS} rays over the field of view (row-major: rows in the pitch order below, columns left to right; relative yaw ` +
      `${lidarYaw.map((a) => Math.round((a / DEG) * 100) / 100).join('/')}°, pitch ${lidarPitch.map((a) => Math.round(a / DEG)).join('/')}°, positive = right / below), ` +
      `each [proximity 1 − d/64 of the first occluding block, water surface or mob (0 = nothing within 64 m), one-hot class of it over ${FEATURE_CLASSES.join(', ')}]`,
  );
  add(
    'nearest',
    CLASS_COUNT * 4,
    `per class (${FEATURE_CLASSES.join(', ')}): the nearest visible thing of that class in the field of view (the view of current_nearest_blocks): [visible, 1 − d/64, relative yaw / 35°, relative pitch / 30°]`,
  );
  add('inventory', INVENTORY_CLASSES.length, `log2(1 + count) / 6 (at most 1) per item class: ${INVENTORY_CLASSES.join(', ')}`);
  add('held', INVENTORY_CLASSES.length, 'one-hot item class of the held item (all 0: empty hand)');
  add(
    'status',
    SCALARS,
    'health / 10, food / 20, −pitch / 90° (positive = looking up), sin and cos of the yaw from the initial facing, feet y − start y (/16, clipped to ±1), on ground, in water, in lava, digging progress 0..1',
  );
  add('motion', MOTION, "the last step's displacement in the facing frame (m × 5: forward, right, up)");
  add('last_action', GAME_FACTS.actions.length, 'one-hot previous action (all 0 at episode start)');
  return { size: offset, fields };
}

export const FEATURE_SPEC: FeatureSpec = buildSpec();

/** The agent's own state the features need, the same in both backends. */
export interface FeatureAgent {
  health: number; // 0..10
  food: number; // 0..20
  onGround: boolean;
  inWater: boolean;
  inLava: boolean;
  /** Feet y minus the episode's start y. */
  yOffset: number;
  /** Yaw relative to the initial facing, radians, positive to the right. */
  relYaw: number;
  /** Digging progress on the current target, 0..1. */
  digProgress: number;
  /** Index of the previous action, or -1 at episode start. */
  lastAction: number;
  inventory: Iterable<[string, number]>;
  held: string | null;
}

/** Per-episode state of the features: the previous feet position (for the motion slots). */
export class FeatureMemory {
  x = 0;
  y = 0;
  z = 0;
  started = false;
  reset(): void {
    this.started = false;
  }
}

// Per-step scratch.
const nearScratch: ViewEntity[] = [];
const classDist = new Float64Array(CLASS_COUNT);
const classYaw = new Float64Array(CLASS_COUNT);
const classPitch = new Float64Array(CLASS_COUNT);
const inventoryCounts = new Float64Array(INVENTORY_CLASSES.length);

function cachedItemClass(item: string): number {
  let k = itemClassCache.get(item);
  if (k === undefined) itemClassCache.set(item, (k = itemClass(item)));
  return k;
}

/** Entry distance of a ray into an axis-aligned box, or -1 if it misses. */
export function rayBox(
  ox: number,
  oy: number,
  oz: number,
  dx: number,
  dy: number,
  dz: number,
  x0: number,
  y0: number,
  z0: number,
  x1: number,
  y1: number,
  z1: number,
): number {
  let tmin = 0,
    tmax = Infinity;
  for (let a = 0; a < 3; a++) {
    const o = a === 0 ? ox : a === 1 ? oy : oz,
      d = a === 0 ? dx : a === 1 ? dy : dz;
    const lo = a === 0 ? x0 : a === 1 ? y0 : z0,
      hi = a === 0 ? x1 : a === 1 ? y1 : z1;
    if (Math.abs(d) < 1e-12) {
      if (o < lo || o > hi) return -1;
      continue;
    }
    let t0 = (lo - o) / d,
      t1 = (hi - o) / d;
    if (t0 > t1) {
      const tt = t0;
      t0 = t1;
      t1 = tt;
    }
    if (t0 > tmin) tmin = t0;
    if (t1 < tmax) tmax = t1;
    if (tmin > tmax) return -1;
  }
  return tmin;
}

/**
 * Writes the policy features (layout: `FEATURE_SPEC`) at `out[offset..offset + FEATURE_SPEC.size)` for the
 * agent at `pose` with this step's `view` (already computed by `observeView`), and updates `memory`.
 */
export function writeFeatures(
  view: ViewResult,
  pose: ViewPose,
  entities: readonly ViewEntity[],
  agent: FeatureAgent,
  memory: FeatureMemory,
  out: Float32Array,
  offset: number,
): void {
  let o = offset;
  const ex = pose.x,
    ey = pose.y + EYE_HEIGHT,
    ez = pose.z;
  // Mobs a LiDAR ray can hit: those of a kind the view sees (a ray reaches only what is in sight), within range.
  const near = nearScratch;
  near.length = 0;
  for (const e of entities) if (view.dist[e.nameIndex] !== Infinity && Math.abs(e.x - ex) < VIEW + 2 && Math.abs(e.z - ez) < VIEW + 2) near.push(e);
  for (let r = 0, i = 0; r < LIDAR_ROWS; r++) {
    const pitch = Math.max(-Math.PI / 2, Math.min(Math.PI / 2, pose.pitch - lidarPitch[r]!));
    const sp = Math.sin(pitch),
      cp = Math.cos(pitch);
    for (let c = 0; c < LIDAR_COLUMNS; c++, i++) {
      let d = view.lidarDist[i]!;
      let k = d === Infinity ? -1 : nameClass[stateToBlock[view.lidarState[i]!]!]!;
      if (near.length > 0) {
        const yaw = pose.yaw - lidarYaw[c]!;
        const dx = -Math.sin(yaw) * cp,
          dy = sp,
          dz = -Math.cos(yaw) * cp;
        for (const e of near) {
          const h = e.width / 2;
          const t = rayBox(ex, ey, ez, dx, dy, dz, e.x - h, e.y, e.z - h, e.x + h, e.y + e.height, e.z + h);
          if (t >= 0 && t < d && t <= VIEW) {
            d = t;
            k = nameClass[e.nameIndex]!;
          }
        }
      }
      out[o++] = d === Infinity ? 0 : 1 - d / VIEW;
      for (let j = 0; j < CLASS_COUNT; j++) out[o++] = j === k ? 1 : 0;
    }
  }
  classDist.fill(Infinity);
  for (let s = 0; s < view.seenCount; s++) {
    const i = view.seen[s]!;
    const k = nameClass[i]!;
    if (k < 0 || view.dist[i]! >= classDist[k]!) continue;
    classDist[k] = view.dist[i]!;
    classYaw[k] = view.yaw[i]!;
    classPitch[k] = view.pitch[i]!;
  }
  for (let k = 0; k < CLASS_COUNT; k++) {
    const d = classDist[k]!;
    if (d === Infinity) {
      out[o++] = 0;
      out[o++] = 0;
      out[o++] = 0;
      out[o++] = 0;
    } else {
      out[o++] = 1;
      out[o++] = 1 - Math.min(d, VIEW) / VIEW;
      out[o++] = classYaw[k]! / FOV_YAW;
      out[o++] = classPitch[k]! / FOV_PITCH;
    }
  }
  inventoryCounts.fill(0);
  for (const [item, n] of agent.inventory) if (n > 0) inventoryCounts[cachedItemClass(item)]! += n;
  for (let k = 0; k < INVENTORY_CLASSES.length; k++) out[o++] = Math.min(1, Math.log2(1 + inventoryCounts[k]!) / 6);
  const held = agent.held === null ? -1 : cachedItemClass(agent.held);
  for (let k = 0; k < INVENTORY_CLASSES.length; k++) out[o++] = k === held ? 1 : 0;
  out[o++] = agent.health / GAME_FACTS.maxHealth;
  out[o++] = agent.food / 20;
  out[o++] = -pose.pitch / (Math.PI / 2);
  out[o++] = Math.sin(agent.relYaw);
  out[o++] = Math.cos(agent.relYaw);
  out[o++] = Math.max(-1, Math.min(1, agent.yOffset / 16));
  out[o++] = agent.onGround ? 1 : 0;
  out[o++] = agent.inWater ? 1 : 0;
  out[o++] = agent.inLava ? 1 : 0;
  out[o++] = agent.digProgress;
  if (memory.started) {
    const mx = pose.x - memory.x,
      my = pose.y - memory.y,
      mz = pose.z - memory.z;
    const fx = -Math.sin(pose.yaw),
      fz = -Math.cos(pose.yaw); // forward; right is (−fz, fx)
    out[o++] = Math.max(-1, Math.min(1, (mx * fx + mz * fz) * 5));
    out[o++] = Math.max(-1, Math.min(1, (mx * -fz + mz * fx) * 5));
    out[o++] = Math.max(-1, Math.min(1, my * 5));
  } else {
    out[o++] = 0;
    out[o++] = 0;
    out[o++] = 0;
  }
  memory.x = pose.x;
  memory.y = pose.y;
  memory.z = pose.z;
  memory.started = true;
  for (let a = 0; a < GAME_FACTS.actions.length; a++) out[o++] = a === agent.lastAction ? 1 : 0;
}
