// The simulator's mobs, after Minecraft 1.16.5 (decompiled sources: the mobs' registerGoals and
// createAttributes, LivingEntity.travel, Entity.push, NaturalSpawner, Monster, Explosion):
// - plains animals placed at chunk generation (worldgen.chunkCreatures) for the chunks around the agent;
// - walking physics: a mob walking at speed s = movement_speed × goal modifier accelerates 0.98·s² per tick on
//   the ground and keeps 0.546 (0.6 block friction × 0.91) of its velocity, so it settles at 2.2·0.98·s² blocks
//   per tick (a cow strolls at 1.7 m/s, panics at 6.9 m/s); collides with blocks (steps up one block);
//   overlapping entities push each other apart (0.05 per push, as Entity.push), the agent included;
// - goals: RandomStrollGoal (1/120 per tick, within 10 blocks), PanicGoal for 100 ticks after a hit (within 5);
//   monsters target the agent in sight within their follow range, melee (zombie, spider), shoot (skeleton) or
//   swell and explode (creeper);
// - natural monster spawning underground in cave cells 24..128 m from the agent, up to the mob cap, where the
//   block light (lava's, a torch's) is low enough (Monster.isDarkEnoughToSpawn).
import type { PhysicsEntity } from 'prismarine-physics';
import {
  LAVA_BLOCK,
  WATER_BLOCK,
  MOB_MAX_HEALTH,
  MOB_SPEED,
  S,
  mcData,
  mobNameIndex,
  stateLightEmit,
  stateLightFilter,
  stateSolid as solidTable,
  stateToBlock as toBlockTable,
} from '../game/registry';
import type { SimWorld } from './world';
import { chunkKey, chunkKeyX, chunkKeyZ } from '../game/worldgen';
import { CREATURE_CHUNK_RADIUS, chunkCreatures, type UNDERGROUND_MONSTERS, type MobSpawn } from '../game/worldgen';
import type { ViewEntity } from '../game/observe';
import type { PlayerRules } from '../game/rules';
import type { WorldOptions } from '../../tasks';

const stateSolid = solidTable;
const stateToBlock = toBlockTable;

/** Ground movement: friction 0.6 × 0.91 kept per tick; input scaled by 0.98 (LivingEntity.aiStep / travel). */
const GROUND_DRAG = 0.6 * 0.91;
const AIR_DRAG = 0.91;
const GRAVITY = 0.08;
/** PanicGoal lasts while the last hurt is under 100 ticks old (LivingEntity.baseTick clears lastHurtByMob). */
export const PANIC_TICKS = 100;
/** RandomStrollGoal: interval 120 (1 in 120 per tick), DefaultRandomPos within 10 blocks; PanicGoal within 5. */
const STROLL_CHANCE = 1 / 120,
  STROLL_RANGE = 10,
  PANIC_RANGE = 5;
/** PanicGoal and stroll speed modifiers (Cow 2.0, Pig/Sheep 1.25, Chicken 1.4, AbstractHorse 1.2 and stroll 0.7). */
const PANIC_MODIFIER: Readonly<Record<string, number>> = { cow: 2, pig: 1.25, sheep: 1.25, chicken: 1.4, horse: 1.2, donkey: 1.2 };
const STROLL_MODIFIER: Readonly<Record<string, number>> = { horse: 0.7, donkey: 0.7 };
/**
 * Passive mobs farther than this from the agent stand still until it comes nearer (beyond the 64 m view they
 * cannot be seen; the game ticks entities within its simulation distance).
 */
const TICK_RANGE = 72;

// Monsters (Zombie/Skeleton/Spider/Creeper.createAttributes; Normal difficulty, where damage to players is as is).
/** FOLLOW_RANGE: zombie 35, the others 16 (Monster default). NearestAttackableTargetGoal: must see, checks 1 in 10 ticks. */
const FOLLOW_RANGE: Readonly<Record<string, number>> = { zombie: 35, skeleton: 16, spider: 16, creeper: 16 };
/** ATTACK_DAMAGE: zombie 3, spider 2 (MeleeAttackGoal: every 20 ticks within reach² = (2·width)² + target width). */
const MELEE_DAMAGE: Readonly<Record<string, number>> = { zombie: 3, spider: 2 };
const MELEE_COOLDOWN = 20;
/** TargetGoal.unseenMemoryTicks: a target out of sight this long is dropped. */
const UNSEEN_MEMORY = 60;
/** Skeleton (RangedBowAttackGoal): within 15 blocks, a shot every 40 ticks off Hard after a 20-tick draw. */
const BOW_RANGE = 15,
  BOW_INTERVAL = 40,
  BOW_DRAW = 20;
/** Creeper: SwellGoal starts within 3 blocks, stops beyond 7 or out of sight; explodes at swell 30 with power 3. */
const SWELL_START = 3,
  SWELL_STOP = 7,
  SWELL_MAX = 30,
  CREEPER_POWER = 3;
/** Monster mob cap (MobCategory.MONSTER, 70 per 17×17 chunks), spawn distance 24..128, despawn: 128 at once, 1/800 beyond 32. */
const MONSTER_CAP = 70,
  SPAWN_MIN = 24,
  DESPAWN_FAR = 128,
  DESPAWN_NEAR = 32,
  DESPAWN_CHANCE = 1 / 800;
/** BiomeDefaultFeatures.monsters (plains): spider 100, zombie 95, skeleton 100, creeper 100, in groups of 4. */
const MONSTER_WEIGHTS: readonly { type: (typeof UNDERGROUND_MONSTERS)[number]; weight: number }[] = [
  { type: 'spider', weight: 100 },
  { type: 'zombie', weight: 95 },
  { type: 'skeleton', weight: 100 },
  { type: 'creeper', weight: 100 },
];
const MONSTER_WEIGHT = MONSTER_WEIGHTS.reduce((s, m) => s + m.weight, 0);
/**
 * Spawn attempts (the game tries one position per loaded chunk per tick): 80 every 20 ticks (4 per tick, batched
 * so the cap bookkeeping runs once a second), and 3000 before the episode starts.
 */
const SPAWN_INTERVAL = 20,
  SPAWN_ATTEMPTS_PER_INTERVAL = 80,
  SPAWN_ATTEMPTS_AT_START = 3000;
const PLAYER_WIDTH = 0.6,
  PLAYER_HEIGHT = 1.8;

export interface Mob extends ViewEntity {
  type: string;
  hostile: boolean;
  health: number;
  /** movement_speed attribute. */
  speed: number;
  targetX: number;
  targetZ: number;
  moving: boolean;
  /** Speed modifier of the current goal. */
  modifier: number;
  panic: number;
  hurt: number;
  lastDamage: number;
  vx: number;
  vy: number;
  vz: number;
  onGround: boolean;
  /** Monsters: whether the agent is the target, ticks since last seen, attack cooldown, creeper swell. */
  targeting: boolean;
  unseen: number;
  cooldown: number;
  swell: number;
}

/** A mob in its initial state at a spawn. */
export function makeMob(s: MobSpawn): Mob {
  const info = mcData.entitiesByName[s.type]!;
  return {
    type: s.type,
    nameIndex: mobNameIndex(s.type),
    x: s.x,
    y: s.y,
    z: s.z,
    width: info.width ?? 0.9,
    height: info.height ?? 1.4,
    hostile: s.type in FOLLOW_RANGE,
    health: s.maxHealth,
    speed: s.speed ?? MOB_SPEED[s.type] ?? 0.25,
    targetX: s.x,
    targetZ: s.z,
    moving: false,
    modifier: 1,
    panic: 0,
    hurt: 0,
    lastDamage: 0,
    vx: 0,
    vy: 0,
    vz: 0,
    onGround: true,
    targeting: false,
    unseen: 0,
    cooldown: 0,
    swell: 0,
  };
}

/** What the mobs act on each tick. */
export interface MobWorld {
  world: SimWorld;
  mobs: Mob[];
  entity: PhysicsEntity;
  rules: PlayerRules;
  options: WorldOptions;
  random(): number;
}

/** Plains: chunk-generation animals of the chunks within CREATURE_CHUNK_RADIUS of (x, z), once per chunk. */
export class CreatureChunks {
  private readonly done = new Set<number>();
  private lastKey = Number.NaN;
  reset(): void {
    this.done.clear();
    this.lastKey = Number.NaN;
  }
  ensure(w: MobWorld, x: number, z: number): void {
    const cx = Math.floor(x / 16),
      cz = Math.floor(z / 16);
    const key = chunkKey(cx, cz);
    if (key === this.lastKey) return;
    this.lastKey = key;
    for (let dx = -CREATURE_CHUNK_RADIUS; dx <= CREATURE_CHUNK_RADIUS; dx++) {
      for (let dz = -CREATURE_CHUNK_RADIUS; dz <= CREATURE_CHUNK_RADIUS; dz++) {
        const k = chunkKey(cx + dx, cz + dz);
        if (this.done.has(k)) continue;
        this.done.add(k);
        for (const s of chunkCreatures(w.world.seed, cx + dx, cz + dz, w.options)) w.mobs.push(makeMob(s));
      }
    }
  }
}

const solidAt = (w: SimWorld, x: number, y: number, z: number) => stateSolid[w.stateAt(x, y, z)] === 1;

/** Whether a w×h box with feet centre (x, y, z) overlaps a solid block. */
function boxBlocked(w: SimWorld, x: number, y: number, z: number, width: number, height: number): boolean {
  const r = width / 2 - 1e-4;
  const x0 = Math.floor(x - r),
    x1 = Math.floor(x + r),
    z0 = Math.floor(z - r),
    z1 = Math.floor(z + r);
  const y0 = Math.floor(y + 1e-4),
    y1 = Math.floor(y + height - 1e-4);
  for (let bx = x0; bx <= x1; bx++) for (let bz = z0; bz <= z1; bz++) for (let by = y0; by <= y1; by++) if (solidAt(w, bx, by, bz)) return true;
  return false;
}

/** Line of sight between two eye points through non-solid blocks (Mob.canSee / LivingEntity.hasLineOfSight). */
export function lineOfSight(w: SimWorld, ax: number, ay: number, az: number, bx: number, by: number, bz: number): boolean {
  const d = Math.hypot(bx - ax, by - ay, bz - az);
  const steps = Math.ceil(d / 0.25);
  for (let k = 1; k < steps; k++) {
    const t = k / steps;
    if (solidAt(w, Math.floor(ax + (bx - ax) * t), Math.floor(ay + (by - ay) * t), Math.floor(az + (bz - az) * t))) return false;
  }
  return true;
}

/** Whether the cells a w×h box at feet (x, y, z) newly enters along x (dir ±1) or z are solid: the leading face only. */
function faceBlocked(w: SimWorld, x: number, y: number, z: number, width: number, height: number, alongX: boolean, dir: number): boolean {
  const r = width / 2 - 1e-4;
  const y0 = Math.floor(y + 1e-4),
    y1 = Math.floor(y + height - 1e-4);
  if (alongX) {
    const bx = Math.floor(x + dir * r);
    for (let bz = Math.floor(z - r); bz <= Math.floor(z + r); bz++) for (let by = y0; by <= y1; by++) if (solidAt(w, bx, by, bz)) return true;
  } else {
    const bz = Math.floor(z + dir * r);
    for (let bx = Math.floor(x - r); bx <= Math.floor(x + r); bx++) for (let by = y0; by <= y1; by++) if (solidAt(w, bx, by, bz)) return true;
  }
  return false;
}

/** Moves a mob by its velocity, axis by axis, stepping up one block where the way is otherwise free. */
function moveMob(w: SimWorld, m: Mob): void {
  const r = m.width / 2 - 1e-4;
  // Only a move that carries the box's leading face into new cells can collide (the box is free where it is).
  const blockedX =
    m.vx !== 0 &&
    Math.floor(m.x + m.vx + Math.sign(m.vx) * r) !== Math.floor(m.x + Math.sign(m.vx) * r) &&
    faceBlocked(w, m.x + m.vx, m.y, m.z, m.width, m.height, true, Math.sign(m.vx));
  if (!blockedX) m.x += m.vx;
  const blockedZ =
    m.vz !== 0 &&
    Math.floor(m.z + m.vz + Math.sign(m.vz) * r) !== Math.floor(m.z + Math.sign(m.vz) * r) &&
    faceBlocked(w, m.x, m.y, m.z + m.vz, m.width, m.height, false, Math.sign(m.vz));
  if (!blockedZ) m.z += m.vz;
  if ((blockedX || blockedZ) && m.onGround) {
    // Mobs jump up one-block steps on their way (JumpControl); a wall two blocks high stops them.
    const nx = m.x + (blockedX ? m.vx : 0),
      nz = m.z + (blockedZ ? m.vz : 0);
    if (!boxBlocked(w, nx, m.y + 1, nz, m.width, m.height) && !boxBlocked(w, m.x, m.y + 1, m.z, m.width, m.height)) {
      m.y = Math.floor(m.y + 1e-4) + 1;
      m.x = nx;
      m.z = nz;
    } else {
      if (blockedX) m.vx = 0;
      if (blockedZ) m.vz = 0;
      m.moving = false;
    }
  }
  // Vertical: gravity and landing.
  const onFloor = m.y - Math.floor(m.y) < 0.02 && m.vy <= 0;
  if (onFloor && boxBlocked(w, m.x, m.y - 0.05, m.z, m.width, 0.04)) {
    m.onGround = true;
    m.vy = 0;
    return;
  }
  m.onGround = false;
  m.vy = (m.vy - GRAVITY) * 0.98;
  const ny = m.y + m.vy;
  if (m.vy < 0 && boxBlocked(w, m.x, ny, m.z, m.width, Math.min(m.height, m.y - ny + 0.01))) {
    m.y = Math.floor(ny) + 1;
    m.vy = 0;
    m.onGround = true;
  } else m.y = ny;
  if (m.y < w.minY - 64) m.health = 0;
}

function pickTarget(m: Mob, range: number, modifier: number, random: () => number): void {
  m.targetX = m.x + (random() * 2 - 1) * range;
  m.targetZ = m.z + (random() * 2 - 1) * range;
  m.modifier = modifier;
  m.moving = true;
}

/** The push `pushApart` found: b's velocity takes (+x, +z), a's (−x, −z). A typed array, not a closure per side. */
const pushBy = new Float64Array(2);

/**
 * Entity.push between two overlapping boxes: each side gets 0.05 along the separation (both entities push:
 * twice). Writes b's share to pushBy (a's is its negation); false when the boxes are too close to have a direction.
 */
function pushApart(a: { x: number; z: number }, b: { x: number; z: number }): boolean {
  let d = b.x - a.x,
    e = b.z - a.z;
  let f = Math.max(Math.abs(d), Math.abs(e));
  if (f < 0.01) return false;
  f = Math.sqrt(f);
  d /= f;
  e /= f;
  const g = Math.min(1, 1 / f);
  pushBy[0] = d * (g * 0.05 * 2);
  pushBy[1] = e * (g * 0.05 * 2);
  return true;
}

const overlaps = (ax: number, ay: number, az: number, aw: number, ah: number, bx: number, by: number, bz: number, bw: number, bh: number) =>
  Math.abs(ax - bx) < (aw + bw) / 2 && Math.abs(az - bz) < (aw + bw) / 2 && ay < by + bh && by < ay + ah;

/** Damage of an explosion of `power` at distance d to an exposed entity (Explosion.explode; Normal difficulty). */
export function explosionDamage(power: number, distance: number): number {
  const q = distance / (power * 2);
  if (q > 1) return 0;
  const impact = 1 - q;
  return Math.floor(((impact * impact + impact) / 2) * 7 * (power * 2) + 1);
}

/** Pair codes i × PAIR_BASE + j (i < j) of `overlappingPairs`. */
const PAIR_BASE = 65536;
// Scratch of overlappingPairs (tickMobs runs to completion, one env at a time).
let sweepIndex = new Int32Array(64);
let sweepX = new Float64Array(64);
const pairCodes: number[] = [];

/**
 * The live mobs' overlapping pairs, ascending by (i, j): exactly the pairs the all-pairs test finds, from a sweep
 * over x (mobs sorted by x; a mob is compared only with those less than half the two widths ahead, plus a margin
 * far above rounding, then with the same exact test), so a tick costs O(n log n) instead of n² / 2 box tests.
 */
function overlappingPairs(mobs: readonly Mob[]): number[] {
  pairCodes.length = 0;
  let n = 0,
    maxWidth = 0;
  if (sweepIndex.length < mobs.length) {
    sweepIndex = new Int32Array(mobs.length * 2);
    sweepX = new Float64Array(mobs.length * 2);
  }
  for (let i = 0; i < mobs.length; i++) {
    const m = mobs[i]!;
    if (m.health <= 0) continue;
    if (m.width > maxWidth) maxWidth = m.width;
    // Insertion sort by x (n is a few dozen).
    let k = n++;
    while (k > 0 && sweepX[k - 1]! > m.x) {
      sweepX[k] = sweepX[k - 1]!;
      sweepIndex[k] = sweepIndex[k - 1]!;
      k--;
    }
    sweepX[k] = m.x;
    sweepIndex[k] = i;
  }
  for (let k = 0; k < n; k++) {
    const i = sweepIndex[k]!;
    const a = mobs[i]!;
    const reach = (a.width + maxWidth) / 2 + 1e-6;
    for (let q = k + 1; q < n && sweepX[q]! - a.x < reach; q++) {
      const j = sweepIndex[q]!;
      const b = mobs[j]!;
      if (!overlaps(a.x, a.y, a.z, a.width, a.height, b.x, b.y, b.z, b.width, b.height)) continue;
      pairCodes.push(i < j ? i * PAIR_BASE + j : j * PAIR_BASE + i);
    }
  }
  if (pairCodes.length > 1) pairCodes.sort((u, v) => u - v);
  return pairCodes;
}

/** One game tick of every mob: goals, movement, pushing, attacks; dead and despawned mobs are removed. */
export function tickMobs(w: MobWorld): void {
  const { world, entity: e, random } = w;
  const mobs = w.mobs;
  const eyeX = e.pos.x,
    eyeY = e.pos.y + 1.62,
    eyeZ = e.pos.z;
  for (let i = 0; i < mobs.length; i++) {
    const m = mobs[i]!;
    const dx = e.pos.x - m.x,
      dz = e.pos.z - m.z,
      dy = e.pos.y - m.y;
    const dist2 = dx * dx + dy * dy + dz * dz;
    if (m.hostile) {
      // Despawning (Mob.checkDespawn): at once beyond 128 blocks, 1 in 800 per tick beyond 32.
      if (dist2 > DESPAWN_FAR * DESPAWN_FAR || (dist2 > DESPAWN_NEAR * DESPAWN_NEAR && random() < DESPAWN_CHANCE)) {
        m.health = 0;
        continue;
      }
    } else if (dist2 > TICK_RANGE * TICK_RANGE) continue;
    if (m.hurt > 0) m.hurt--;
    if (m.cooldown > 0) m.cooldown--;
    if (m.hostile) monsterGoals(w, m, dist2, eyeX, eyeY, eyeZ);
    else if (m.panic > 0) {
      m.panic--;
      if (!m.moving) pickTarget(m, PANIC_RANGE, PANIC_MODIFIER[m.type] ?? 1.25, random);
    } else if (!m.moving && random() < STROLL_CHANCE) pickTarget(m, STROLL_RANGE, STROLL_MODIFIER[m.type] ?? 1, random);
    if (m.moving) {
      const tx = m.targetX - m.x,
        tz = m.targetZ - m.z,
        tl = Math.hypot(tx, tz);
      if (tl < 0.5) m.moving = false;
      else {
        const s = m.speed * m.modifier;
        const accel = m.onGround ? 0.98 * s * s : 0.02 * 0.98; // airborne: the flying speed 0.02
        m.vx += (tx / tl) * accel;
        m.vz += (tz / tl) * accel;
      }
    }
    if (m.vx === 0 && m.vz === 0 && m.vy === 0 && m.onGround) continue;
    moveMob(world, m);
    const drag = m.onGround ? GROUND_DRAG : AIR_DRAG;
    m.vx *= drag;
    m.vz *= drag;
    if (Math.abs(m.vx) < 0.003) m.vx = 0;
    if (Math.abs(m.vz) < 0.003) m.vz = 0;
    if (stateToBlock[world.stateAt(Math.floor(m.x), Math.floor(m.y + 0.1), Math.floor(m.z))] === LAVA_BLOCK) {
      // In lava: 4 damage per hit, 10-tick immunity (mobs burn to death in a few seconds).
      if (m.hurt === 0) {
        m.health -= 4;
        m.hurt = 10;
      }
    }
  }
  // Pushing: overlapping mobs, and mobs and the agent (the agent's velocity takes the push).
  const pairs = overlappingPairs(mobs);
  let p = 0;
  for (let i = 0; i < mobs.length; i++) {
    const a = mobs[i]!;
    if (a.health <= 0) continue;
    // Pairs in the all-pairs loop's order (i, then j ascending), then the agent: the velocity sums stay the same.
    for (; p < pairs.length && Math.floor(pairs[p]! / PAIR_BASE) === i; p++) {
      const b = mobs[pairs[p]! % PAIR_BASE]!;
      if (!pushApart(a, b)) continue;
      // x − d is x + (−d) in IEEE arithmetic: the same sums as adding the negated push.
      a.vx -= pushBy[0]!;
      a.vz -= pushBy[1]!;
      b.vx += pushBy[0]!;
      b.vz += pushBy[1]!;
    }
    if (overlaps(a.x, a.y, a.z, a.width, a.height, e.pos.x, e.pos.y, e.pos.z, PLAYER_WIDTH, PLAYER_HEIGHT) && pushApart(a, e.pos)) {
      a.vx -= pushBy[0]!;
      a.vz -= pushBy[1]!;
      e.vel.x += pushBy[0]!;
      e.vel.z += pushBy[1]!;
    }
  }
  let alive = 0;
  for (let i = 0; i < mobs.length; i++) if (mobs[i]!.health > 0) mobs[alive++] = mobs[i]!;
  mobs.length = alive;
}

/** Targeting, chasing and attacking the agent (monsters only). */
function monsterGoals(w: MobWorld, m: Mob, dist2: number, eyeX: number, eyeY: number, eyeZ: number): void {
  const { world, entity: e, rules, random } = w;
  const range = FOLLOW_RANGE[m.type]!;
  const mEyeY = m.y + m.height * 0.85;
  if (!m.targeting) {
    if (dist2 <= range * range && random() < 0.1 && lineOfSight(world, m.x, mEyeY, m.z, eyeX, eyeY, eyeZ)) {
      m.targeting = true;
      m.unseen = 0;
    } else {
      if (!m.moving && random() < STROLL_CHANCE) pickTarget(m, STROLL_RANGE, 1, random);
      return;
    }
  }
  const sees = lineOfSight(world, m.x, mEyeY, m.z, eyeX, eyeY, eyeZ);
  m.unseen = sees ? 0 : m.unseen + 1;
  if (dist2 > range * range || m.unseen > UNSEEN_MEMORY || rules.hp <= 0) {
    m.targeting = false;
    m.swell = 0;
    return;
  }
  const dist = Math.sqrt(dist2);
  // Chase in a straight line (the game path-finds; a wall in the way stops these mobs).
  const chase = (stopAt: number) => {
    if (dist > stopAt) {
      m.targetX = e.pos.x;
      m.targetZ = e.pos.z;
      m.modifier = 1;
      m.moving = true;
    } else m.moving = false;
  };
  if (m.type === 'zombie' || m.type === 'spider') {
    chase(0.5);
    const reach2 = (2 * m.width) ** 2 + PLAYER_WIDTH;
    if (dist2 <= reach2 && m.cooldown <= 0 && sees) {
      m.cooldown = MELEE_COOLDOWN;
      rules.hurt(MELEE_DAMAGE[m.type]!, 'mob');
      knockback(e, m, 0.4);
    }
  } else if (m.type === 'skeleton') {
    chase(BOW_RANGE * 0.75);
    if (sees && dist <= BOW_RANGE) {
      if (m.cooldown <= 0) {
        m.cooldown = BOW_INTERVAL + BOW_DRAW;
        // Arrow: velocity 1.6, inaccuracy 14 − 4·difficulty (Normal: 6) → direction noise sd 0.0075·6 per axis;
        // damage ⌈1.6 · (2 + 0.11·2 + N(0, 0.25))⌉ (AbstractArrow, setEnchantmentEffectsFromEntity).
        const sd = 0.0075 * 6 * dist;
        const lateral = gaussian(random) * sd,
          vertical = gaussian(random) * sd;
        if (Math.abs(lateral) < PLAYER_WIDTH / 2 + 0.25 && Math.abs(vertical) < PLAYER_HEIGHT / 2 + 0.25) {
          rules.hurt(Math.ceil(1.6 * (2.22 + gaussian(random) * 0.25)), 'mob');
          knockback(e, m, 0.4);
        }
      }
    }
  } else if (m.type === 'creeper') {
    if (m.swell > 0 || dist < SWELL_START) {
      m.moving = false;
      m.swell += dist > SWELL_STOP || !sees ? -1 : 1;
      if (m.swell < 0) m.swell = 0;
      if (m.swell >= SWELL_MAX) explode(w, m);
    } else chase(SWELL_START - 0.5);
  }
}

/** LivingEntity.knockback on the agent, away from the attacker. */
function knockback(e: PhysicsEntity, from: { x: number; z: number }, strength: number): void {
  const dx = e.pos.x - from.x,
    dz = e.pos.z - from.z,
    l = Math.hypot(dx, dz) || 1;
  e.vel.x = e.vel.x / 2 + (dx / l) * strength;
  e.vel.z = e.vel.z / 2 + (dz / l) * strength;
  if (e.onGround) e.vel.y = Math.min(0.4, e.vel.y / 2 + strength);
}

/** A creeper explodes (power 3): the agent takes Explosion damage; blocks within the blast break (bedrock, fluids stay). */
function explode(w: MobWorld, m: Mob): void {
  const { world, entity: e, rules } = w;
  m.health = 0;
  const cy = m.y + m.height / 2;
  const d = Math.hypot(e.pos.x - m.x, e.pos.y - m.y, e.pos.z - m.z);
  const exposed = lineOfSight(world, m.x, cy, m.z, e.pos.x, e.pos.y + 0.9, e.pos.z) ? 1 : 0.3;
  const damage = explosionDamage(CREEPER_POWER, d / exposed);
  if (damage > 0) {
    rules.hurt(damage, 'mob');
    knockback(e, m, Math.min(1, damage / 10));
  }
  const r = CREEPER_POWER * 0.8;
  for (let x = Math.floor(m.x - r); x <= Math.floor(m.x + r); x++) {
    for (let y = Math.floor(cy - r); y <= Math.floor(cy + r); y++) {
      for (let z = Math.floor(m.z - r); z <= Math.floor(m.z + r); z++) {
        if ((x + 0.5 - m.x) ** 2 + (y + 0.5 - cy) ** 2 + (z + 0.5 - m.z) ** 2 > r * r) continue;
        const s = world.stateAt(x, y, z);
        const b = stateToBlock[s]!;
        if (s === S.bedrock || b === LAVA_BLOCK || b === WATER_BLOCK || stateSolid[s] === 0) continue;
        world.setState(x, y, z, S.cave_air);
      }
    }
  }
}

function gaussian(random: () => number): number {
  const u = Math.max(random(), 1e-12),
    v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** The block light levels (0–15). */
const MAX_LIGHT = 15;
/** blockLightAt's walk: cells within MAX_LIGHT − 1 steps of the start, a cube of side 2·14 + 1 around it. */
const LIGHT_REACH = MAX_LIGHT - 1;
const LIGHT_SIDE = 2 * LIGHT_REACH + 1;
const lightSeen = new Uint32Array(LIGHT_SIDE * LIGHT_SIDE * LIGHT_SIDE);
let lightWalk = 0;
/** The cost of the way from each cell to the start, and the cell's state, read once (valid where lightSeen holds this walk). */
const lightCost = new Uint8Array(lightSeen.length);
const lightState = new Uint32Array(lightSeen.length);
/** The search's cells by cost 0..14 (Dial's algorithm: costs are small integers), emptied at each call. */
const lightBuckets: number[][] = Array.from({ length: MAX_LIGHT }, () => []);
const NEIGHBOURS = [
  [1, 0, 0],
  [-1, 0, 0],
  [0, 1, 0],
  [0, -1, 0],
  [0, 0, 1],
  [0, 0, -1],
] as const;

/**
 * The state at (x, y, z) for the light search, stone where the chunk is not generated: the search must not generate
 * chunks (the spawner picks among the generated ones), and a chunk not generated yet holds no light that counts.
 */
function lightStateAt(world: SimWorld, x: number, y: number, z: number): number {
  if (y < world.minY) return world.below;
  if (y >= world.maxY) return world.above;
  const c = world.peekColumn(x >> 4, z >> 4);
  return c ? c.cells[((y - world.minY) << 8) | ((z & 15) << 4) | (x & 15)]! : S.stone;
}

/**
 * Block light at cell (x, y, z), as the game's block light engine settles it (1.16.5 BlockLightEngine /
 * LayerLightEngine): a block that gives off light (registry `stateLightEmit`) holds that level in its own cell, and
 * light passing into a neighbouring cell loses max(1, that cell's `stateLightFilter`), so stone stops it. The level
 * here is the best any source reaches it with: a search outwards from the cell, each cell at the most light it can
 * still pass on (the same rule run backwards), up to 14 steps, where a 15 source's light has run out. Chunks not
 * generated give no light.
 */
export function blockLightAt(world: SimWorld, x: number, y: number, z: number): number {
  lightWalk++;
  if (lightWalk === 0xffffffff) {
    lightSeen.fill(0);
    lightWalk = 1;
  }
  const index = (dx: number, dy: number, dz: number) => ((dx + LIGHT_REACH) * LIGHT_SIDE + (dy + LIGHT_REACH)) * LIGHT_SIDE + (dz + LIGHT_REACH);
  // Light a source at this cell would need to give off to reach the start: the cost of the way back (each cell
  // entered towards the start takes max(1, its filter)); a uniform-cost search, since a water cell costs 2.
  const start = index(0, 0, 0);
  lightSeen[start] = lightWalk;
  lightCost[start] = 0;
  lightState[start] = lightStateAt(world, x, y, z);
  let best = stateLightEmit[lightState[start]!]!;
  const buckets = lightBuckets;
  for (const b of buckets) b.length = 0;
  buckets[0]!.push(start);
  for (let cost = 0; cost < MAX_LIGHT && best < MAX_LIGHT - cost; cost++) {
    const bucket = buckets[cost]!;
    for (let q = 0; q < bucket.length; q++) {
      const i = bucket[q]!;
      if (lightCost[i] !== cost) continue; // reached cheaper since
      const dz = (i % LIGHT_SIDE) - LIGHT_REACH,
        dy = (Math.floor(i / LIGHT_SIDE) % LIGHT_SIDE) - LIGHT_REACH,
        dx = Math.floor(i / (LIGHT_SIDE * LIGHT_SIDE)) - LIGHT_REACH;
      // Light from a neighbour loses max(1, filter) entering this cell, then the way on to the start. An opaque cell
      // passes nothing on (its own light was counted when it was reached); the start is where light is measured.
      const enter = Math.max(1, stateLightFilter[lightState[i]!]!);
      if (i !== start && enter >= MAX_LIGHT) continue;
      const next = cost + enter;
      if (next >= MAX_LIGHT) continue;
      for (const [nx, ny, nz] of NEIGHBOURS) {
        const ax = dx + nx,
          ay = dy + ny,
          az = dz + nz;
        if (Math.abs(ax) > LIGHT_REACH || Math.abs(ay) > LIGHT_REACH || Math.abs(az) > LIGHT_REACH) continue;
        const j = index(ax, ay, az);
        if (lightSeen[j] === lightWalk) {
          if (lightCost[j]! <= next) continue;
        } else {
          lightSeen[j] = lightWalk;
          lightState[j] = lightStateAt(world, x + ax, y + ay, z + az);
        }
        lightCost[j] = next;
        const emit = stateLightEmit[lightState[j]!]!;
        if (emit - next > best) best = emit - next;
        buckets[next]!.push(j);
      }
    }
  }
  return best;
}

/**
 * NaturalSpawner for monsters underground: `attempts` random cells of generated chunks within 8 chunks of the
 * agent; a cell with air at feet and head, a solid floor, 24..128 m from the agent starts a group of up to 4
 * of one weighted species (spread ±5), while the monster count is under the cap (70 × hostileDensity, scaled
 * to the generated share of the 17×17 chunks). Each mob's cell must be dark enough (Monster.isDarkEnoughToSpawn,
 * 1.16.5): its light no more than nextInt(8), so a cell at block light L takes one with chance (8 − L) / 8 and none
 * at 8 or more (lava lights 7 cells around it out of reach). Sky light is not modelled: caves count as unlit
 * by the sky.
 */
export function spawnMonsters(w: MobWorld, attempts: number): void {
  const { world, entity: e, random } = w;
  const keys = world.generatedKeys;
  if (keys.length === 0 || w.options.hostileDensity <= 0) return;
  const acx = Math.floor(e.pos.x / 16),
    acz = Math.floor(e.pos.z / 16);
  let near = 0;
  for (const k of keys) {
    const cx = chunkKeyX(k),
      cz = chunkKeyZ(k);
    if (Math.abs(cx - acx) <= 8 && Math.abs(cz - acz) <= 8) near++;
  }
  const cap = MONSTER_CAP * w.options.hostileDensity * Math.min(1, near / 289);
  let count = 0;
  for (const m of w.mobs) if (m.hostile) count++;
  for (let a = 0; a < attempts && count < cap; a++) {
    const k = keys[Math.floor(random() * keys.length)]!;
    const cx = chunkKeyX(k),
      cz = chunkKeyZ(k);
    if (Math.abs(cx - acx) > 8 || Math.abs(cz - acz) > 8) continue;
    let x = cx * 16 + Math.floor(random() * 16),
      z = cz * 16 + Math.floor(random() * 16);
    const y = world.minY + 1 + Math.floor(random() * (world.maxY - world.minY - 2));
    if (solidAt(world, x, y, z)) continue;
    let u = random() * MONSTER_WEIGHT;
    const type = MONSTER_WEIGHTS.find((s) => (u -= s.weight) < 0)!.type;
    const info = mcData.entitiesByName[type]!;
    const group = Math.ceil(random() * 4);
    for (let g = 0; g < group && count < cap; g++) {
      x += Math.floor(random() * 6) - Math.floor(random() * 6);
      z += Math.floor(random() * 6) - Math.floor(random() * 6);
      const px = x + 0.5,
        pz = z + 0.5;
      const d2 = (px - e.pos.x) ** 2 + (y - e.pos.y) ** 2 + (pz - e.pos.z) ** 2;
      if (d2 <= SPAWN_MIN * SPAWN_MIN || d2 > DESPAWN_FAR * DESPAWN_FAR) continue;
      if (!solidAt(world, x, y - 1, z) || boxBlocked(world, px, y, pz, info.width ?? 0.6, info.height ?? 1.95)) continue;
      const floor = world.stateAt(x, y - 1, z);
      if (
        floor === S.bedrock ||
        (stateToBlock[world.stateAt(x, y, z)] !== stateToBlock[S.cave_air] && stateToBlock[world.stateAt(x, y, z)] !== stateToBlock[S.air])
      )
        continue;
      // Light 0 always passes (nextInt(8) ≥ 0): no draw is made for it.
      const light = blockLightAt(world, x, y, z);
      if (light > 0 && (light >= 8 || light > Math.floor(random() * 8))) continue;
      w.mobs.push(makeMob({ type, x: px, y, z: pz, maxHealth: MOB_MAX_HEALTH[type]! }));
      count++;
    }
  }
}

export { SPAWN_ATTEMPTS_AT_START, SPAWN_ATTEMPTS_PER_INTERVAL, SPAWN_INTERVAL };
