// One simulated environment: a generated world (worldgen.ts; fluids and falling gravel in world.ts), the agent
// driven by prismarine-physics (one agent step = one game tick: walking moves ~0.2 m, a turn is 15°), the game
// rules the tasks need, the mobs (mobs.ts: animals, monsters), tool wear, and the observation. `SimEnv.step` writes the reward's observation, the info and the policy features.
import { Physics, type PhysicsEntity } from 'prismarine-physics';
import { successCheck, type StepProgress, type TaskSpec } from '../../tasks';
import type { StepInfo, StepObservation } from '../types';
import { FIRE_BLOCKS, WATER_BLOCK, mcData, nameIndex, stateSolid as solidTable, stateToBlock as toBlockTable, S } from '../game/registry';
import { SimWorld, blockOfState } from './world';
import { spawnPoint } from '../game/worldgen';
import { Mulberry32, hash32 } from '../../seeds';
import {
  CreatureChunks,
  PANIC_TICKS,
  SPAWN_ATTEMPTS_AT_START,
  SPAWN_ATTEMPTS_PER_INTERVAL,
  SPAWN_INTERVAL,
  makeMob,
  spawnMonsters,
  tickMobs,
  type Mob,
  type MobWorld,
} from './mobs';
import { worldOptionsOf, type WorldOptions } from '../../tasks';
import { DEG, EYE_HEIGHT, ViewResult, nearestDict, observeView, round3 as round3Fn, wrapAngle as wrapAngleFn } from '../game/observe';
import { FEATURE_SPEC, FeatureMemory, rayBox, writeFeatures } from '../game/features';
import {
  ENTITY_REACH,
  INVULNERABLE_TICKS,
  JumpPlace,
  LookRay,
  PlayerRules,
  applyAction as applyActionFn,
  blockUnderFoot,
  digTicksNeeded,
  newPlayerEntity,
  placePlayer,
  targetBlock,
  type BlockHit,
  type GameActions,
} from '../game/rules';

// Module-local aliases: imported bindings compile to getter calls under tsx, too slow for the hot loop.
const stateSolid = solidTable;
const stateToBlock = toBlockTable;
const applyAction = applyActionFn;
const round3 = round3Fn;
const wrapAngle = wrapAngleFn;

const HAND_ATTACK = { damage: 1, cooldown: 5 };
/** Attack damage and cooldown (ticks) of held tools the tasks give; anything else hits like a hand. */
const TOOL_ATTACK: Readonly<Record<string, { damage: number; cooldown: number }>> = {
  iron_pickaxe: { damage: 4, cooldown: 17 },
  stone_pickaxe: { damage: 3, cooldown: 17 },
  wooden_pickaxe: { damage: 2, cooldown: 17 },
  diamond_pickaxe: { damage: 5, cooldown: 17 },
  iron_sword: { damage: 6, cooldown: 13 },
  stone_sword: { damage: 5, cooldown: 13 },
  wooden_sword: { damage: 4, cooldown: 13 },
  diamond_sword: { damage: 7, cooldown: 13 },
};
// A physics engine holds no per-world state that simulatePlayer uses (the world is a parameter), so one
// engine serves every environment in the process.
let physicsEngine: ReturnType<typeof Physics> | null = null;

/** Deterministic per-episode random numbers (the one PRNG, seeds.ts). */
class Rng extends Mulberry32 {
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
}

export { makeMob, type Mob };

type LootDrop = { item: string; dropChance: number; stackSizeRange: (number | null)[]; silkTouch?: boolean; noSilkTouch?: boolean };

/**
 * Rolls a minecraft-data 1.16.5 loot table (blockLoot / entityLoot) for a tool without silk touch.
 * minecraft-data flattens the game's alternatives into entries with split chances, so: silk-touch entries
 * never drop; the no-silk-touch entries are alternatives of which exactly one drops (weighted by their
 * chances; stone → cobblestone, gravel → gravel or flint); a block's drop of itself at a chance below 1
 * beside other entries is the flattened shears branch (leaves, grass) and needs shears, which no task
 * gives; every other entry drops with its chance. Counts are uniform in `stackSizeRange`.
 */
function rollLoot(drops: LootDrop[], rng: Rng, give: (item: string, n: number) => void, blockName: string | null): void {
  const alternatives = drops.filter((d) => d.noSilkTouch);
  const chosen: LootDrop[] = [];
  if (alternatives.length > 0) {
    let u = rng.next() * alternatives.reduce((sum, d) => sum + d.dropChance, 0);
    chosen.push(alternatives.find((d) => (u -= d.dropChance) < 0) ?? alternatives[alternatives.length - 1]!);
  }
  for (const d of drops) {
    if (d.silkTouch || d.noSilkTouch) continue;
    if (d.item === blockName && d.dropChance < 1 && drops.length > 1) continue;
    if (rng.next() < d.dropChance) chosen.push(d);
  }
  for (const d of chosen) {
    const min = d.stackSizeRange[0] ?? 1,
      max = d.stackSizeRange[1] ?? min;
    const n = rng.int(min, max);
    if (n > 0 && mcData.itemsByName[d.item]) give(d.item, n);
  }
}

export class SimEnv {
  readonly featureSize = FEATURE_SPEC.size;
  world!: SimWorld;
  readonly entity: PhysicsEntity;
  mobs: Mob[] = [];
  seed = 0;
  steps = 0;
  readonly rules = new PlayerRules();
  private startY = 0;
  private startYaw = 0;
  private startPitch = 0;
  private lastAction = -1;
  private attackCooldown = 0;
  private readonly ray = new LookRay();
  /** The block being dug (valid while digTicks > 0) and the block the look ray hits on an attack tick. */
  private readonly dig: BlockHit = { x: 0, y: 0, z: 0, t: 0 };
  private readonly hit: BlockHit = { x: 0, y: 0, z: 0, t: 0 };
  private digTicks = 0;
  private digNeeded = 0;
  private readonly jumpPlace = new JumpPlace();
  private readonly actions: GameActions = {
    attack: () => this.attack(),
    equipNext: () => this.equipNext(),
    startJumpPlace: () => this.jumpPlace.start(this.entity, this.held),
    stopDigging: () => (this.digTicks = 0),
  };
  readonly inventory = new Map<string, number>();
  private held: string | null = null;
  private change = new Map<string, number>();
  private damageDealt = 0;
  private killsStep: Record<string, number> = {};
  readonly kills = new Map<string, number>();
  private rng = new Rng(0);
  readonly worldOptions: WorldOptions;
  private readonly creatureChunks = new CreatureChunks();
  private readonly mobWorld: MobWorld;
  /** Wear of the held tools (uses so far), by item name; a tool breaks at its minecraft-data maxDurability. */
  private readonly toolWear = new Map<string, number>();
  readonly view = new ViewResult();
  private readonly memory = new FeatureMemory();
  /** The task's success rule, over this env's kills and view. */
  private readonly succeeded: (p: StepProgress) => boolean;
  private readonly progress: StepProgress;
  /** Total steps this env has simulated (all episodes). */
  totalSteps = 0;

  constructor(readonly task: TaskSpec) {
    this.worldOptions = worldOptionsOf(task);
    const env = this;
    this.mobWorld = {
      get world() {
        return env.world;
      },
      get mobs() {
        return env.mobs;
      },
      get entity() {
        return env.entity;
      },
      get rules() {
        return env.rules;
      },
      options: this.worldOptions,
      random: () => env.rng.next(),
    };
    this.succeeded = successCheck(task, nameIndex);
    this.progress = { kills: this.kills, dist: this.view.dist };
    this.entity = newPlayerEntity();
  }

  /** Leaves the env's world, giving its chunk columns' memory back (`SimWorld.release`); the env may be reset again. */
  close(): void {
    this.world?.release();
  }

  /** Starts an episode on the world of `seed`; writes the first features at `features[offset..]`. */
  reset(seed: number, features: Float32Array, offset: number): StepObservation {
    this.seed = seed >>> 0;
    this.world?.release();
    this.world = new SimWorld(this.task.world, this.seed, this.worldOptions);
    physicsEngine ??= Physics(mcData, this.world);
    this.rng = new Rng(hash32(this.seed, 0x51ed));
    const spawn = spawnPoint(this.task.world, this.seed, this.worldOptions, this.world);
    const e = this.entity;
    const startY = this.task.startY === 'surface' ? spawn.y : this.task.startY;
    placePlayer(e, spawn.x, startY, spawn.z, spawn.yaw);
    this.startY = startY;
    this.startYaw = spawn.yaw;
    this.startPitch = 0;
    this.mobs = [];
    this.toolWear.clear();
    this.creatureChunks.reset();
    if (this.task.world === 'plains') this.creatureChunks.ensure(this.mobWorld, spawn.x, spawn.z);
    else this.startUnderground();
    this.steps = 0;
    this.rules.reset();
    this.rules.deathCause = null;
    this.lastAction = -1;
    this.attackCooldown = 100;
    this.digTicks = this.digNeeded = 0;
    this.jumpPlace.reset();
    this.inventory.clear();
    for (const [item, n] of Object.entries(this.task.inventory)) this.inventory.set(item, n);
    this.held = Object.keys(this.task.inventory)[0] ?? null;
    this.kills.clear();
    this.memory.reset();
    this.change.clear();
    this.damageDealt = 0;
    this.killsStep = {};
    return this.observe(features, offset);
  }

  /** Advances one tick with action index `action`; writes the features of the resulting state. */
  step(action: number, features: Float32Array, offset: number): { obs: StepObservation; info: StepInfo } {
    this.change.clear();
    this.damageDealt = 0;
    this.killsStep = {};
    this.steps++;
    this.totalSteps++;
    const e = this.entity;
    applyAction(e, action, this.actions);
    this.attackCooldown++;
    const yBefore = e.pos.y;
    physicsEngine!.simulatePlayer(e, this.world);
    this.finishJumpPlace();
    this.applyRules(yBefore);
    this.world.tick(e.pos.x, e.pos.z);
    if (this.task.world === 'plains') this.creatureChunks.ensure(this.mobWorld, e.pos.x, e.pos.z);
    else if (this.steps % SPAWN_INTERVAL === 0) spawnMonsters(this.mobWorld, SPAWN_ATTEMPTS_PER_INTERVAL);
    tickMobs(this.mobWorld);
    this.lastAction = action;
    const obs = this.observe(features, offset);
    const died = this.rules.hp <= 0;
    const success = !died && this.succeeded(this.progress);
    const truncated = !died && !success && this.steps >= this.task.maxSteps;
    const info: StepInfo = {
      step: this.steps,
      seed: this.seed,
      success,
      done: died || success || truncated,
      truncated,
      died,
      deathCause: died ? this.rules.deathCause : null,
      blockUnderFoot: this.blockUnderFoot(),
      inventory: Object.fromEntries(this.inventory),
    };
    return { obs, info };
  }

  blockUnderFoot(): string {
    return blockUnderFoot(this.world, this.entity);
  }

  private give(item: string, n: number): void {
    const now = (this.inventory.get(item) ?? 0) + n;
    if (now > 0) this.inventory.set(item, now);
    else this.inventory.delete(item);
    this.change.set(item, (this.change.get(item) ?? 0) + n);
    if (this.held === null && now > 0) this.held = item;
    if (this.held === item && now <= 0) this.held = this.inventory.keys().next().value ?? null;
  }

  private equipNext(): void {
    const items = [...this.inventory.keys()];
    if (items.length === 0) return;
    const i = this.held === null ? -1 : items.indexOf(this.held);
    this.held = items[(i + 1) % items.length]!;
  }

  /** The held block goes into the cell the feet left once the jump has lifted the player clear of it. */
  private finishJumpPlace(): void {
    const block = this.jumpPlace.due(this.entity, this.held);
    if (!block) return;
    const p = this.entity.pos,
      y = this.jumpPlace.y;
    const x = Math.floor(p.x),
      z = Math.floor(p.z);
    if (stateSolid[this.world.stateAt(x, y, z)] === 1) return;
    this.world.setState(x, y, z, block.defaultState ?? block.id);
    this.give(this.held!, -1);
    this.jumpPlace.placed();
  }

  private attack(): void {
    const e = this.entity;
    const ray = this.ray.from(e);
    const block = targetBlock(this.world, ray, this.hit) ? this.hit : null;
    // Nearest mob whose box the look ray enters within entity reach, and in front of the targeted block.
    let mob: Mob | null = null;
    let mobT = Math.min(ENTITY_REACH, block ? block.t : Infinity);
    for (const m of this.mobs) {
      const t = rayBox(
        ray.ox,
        ray.oy,
        ray.oz,
        ray.dx,
        ray.dy,
        ray.dz,
        m.x - m.width / 2,
        m.y,
        m.z - m.width / 2,
        m.x + m.width / 2,
        m.y + m.height,
        m.z + m.width / 2,
      );
      if (t >= 0 && t <= mobT) {
        mob = m;
        mobT = t;
      }
    }
    if (mob) {
      this.digTicks = 0;
      this.hitMob(mob);
      return;
    }
    if (!block) {
      this.digTicks = 0;
      return;
    }
    const dig = this.dig;
    if (this.digTicks === 0 || block.x !== dig.x || block.y !== dig.y || block.z !== dig.z) {
      dig.x = block.x;
      dig.y = block.y;
      dig.z = block.z;
      this.digTicks = 0;
      const heldId = this.held !== null ? (mcData.itemsByName[this.held]?.id ?? null) : null;
      this.digNeeded = digTicksNeeded(blockOfState(this.world.stateAt(block.x, block.y, block.z)), heldId, e);
    }
    this.digTicks++;
    if (this.digTicks >= this.digNeeded) this.breakBlock(block.x, block.y, block.z);
  }

  /** The item in hand (null: the empty hand). */
  get heldItem(): string | null {
    return this.held;
  }

  /** Ticks it would take to break the block at (x, y, z) holding `item` (null: the hand), as the agent stands. */
  ticksToBreak(item: string | null, x: number, y: number, z: number): number {
    const id = item !== null ? (mcData.itemsByName[item]?.id ?? null) : null;
    return digTicksNeeded(blockOfState(this.world.stateAt(x, y, z)), id, this.entity);
  }

  /** Digging progress on the current target, 0..1 (for the features). */
  private digProgress(): number {
    return this.digTicks > 0 && Number.isFinite(this.digNeeded) ? this.digTicks / this.digNeeded : 0;
  }

  private breakBlock(x: number, y: number, z: number): void {
    const state = this.world.stateAt(x, y, z);
    const block = blockOfState(state);
    this.world.setState(x, y, z, S.air);
    this.digTicks = 0;
    // Blocks that break instantly (plants) cost no durability; swords wear twice on blocks.
    if (this.held !== null && (block.hardness ?? 0) > 0) this.wearTool(this.held.endsWith('_sword') ? 2 : 1);
    const heldId = this.held !== null ? mcData.itemsByName[this.held]?.id : undefined;
    // Blocks with harvest tools drop nothing when broken with anything else (stone by hand).
    if (block.harvestTools && (heldId === undefined || !block.harvestTools[heldId])) return;
    const loot = mcData.blockLoot[block.name];
    if (loot) rollLoot(loot.drops, this.rng, (item, n) => this.give(item, n), block.name);
  }

  private hitMob(m: Mob): void {
    const tool = (this.held !== null && TOOL_ATTACK[this.held]) || HAND_ATTACK;
    const charge = Math.min(1, this.attackCooldown / tool.cooldown);
    this.attackCooldown = 0;
    const damage = tool.damage * (0.2 + 0.8 * charge * charge);
    // Hurt immunity: within 10 ticks of a hit only damage above the last hit's counts, and only the excess.
    const dealt = m.hurt > 0 ? Math.max(0, damage - m.lastDamage) : damage;
    if (dealt <= 0) return;
    m.lastDamage = m.hurt > 0 ? Math.max(m.lastDamage, damage) : damage;
    m.hurt = INVULNERABLE_TICKS;
    const applied = Math.min(dealt, m.health);
    m.health -= dealt;
    this.damageDealt += applied;
    const e = this.entity;
    const kx = m.x - e.pos.x,
      kz = m.z - e.pos.z,
      kl = Math.hypot(kx, kz) || 1;
    m.vx = (kx / kl) * 0.4;
    m.vz = (kz / kl) * 0.4;
    m.panic = PANIC_TICKS;
    m.targeting = m.hostile; // HurtByTargetGoal
    if (this.held !== null) this.wearTool(this.held.endsWith('_sword') ? 1 : 2);
    if (m.health <= 0) {
      this.mobs.splice(this.mobs.indexOf(m), 1);
      this.kills.set(m.type, (this.kills.get(m.type) ?? 0) + 1);
      this.killsStep[m.type] = (this.killsStep[m.type] ?? 0) + 1;
      const loot = mcData.entityLoot[m.type];
      if (loot) rollLoot(loot.drops, this.rng, (item, n) => this.give(item, n), null);
    }
  }

  private applyRules(yBefore: number): void {
    const e = this.entity;
    let inFire = false;
    const minX = Math.floor(e.pos.x - 0.3),
      maxX = Math.floor(e.pos.x + 0.3);
    const minZ = Math.floor(e.pos.z - 0.3),
      maxZ = Math.floor(e.pos.z + 0.3);
    const minY = Math.floor(e.pos.y),
      maxY = Math.floor(e.pos.y + 1.8);
    for (let x = minX; x <= maxX; x++)
      for (let y = minY; y <= maxY; y++)
        for (let z = minZ; z <= maxZ; z++) {
          if (FIRE_BLOCKS.has(stateToBlock[this.world.stateAt(x, y, z)]!)) inFire = true;
        }
    const eyeState = this.world.stateAt(Math.floor(e.pos.x), Math.floor(e.pos.y + EYE_HEIGHT), Math.floor(e.pos.z));
    const eyesInWater = stateToBlock[eyeState] === WATER_BLOCK;
    // LivingEntity.baseTick: eyes inside a solid block (fallen gravel) suffocate, 1 hp per hit (IN_WALL).
    if (stateSolid[eyeState] === 1) this.rules.hurt(1, 'other');
    this.rules.tick(e.isInLava, inFire, e.isInWater, eyesInWater, e.onGround, yBefore - e.pos.y, e.pos.y < -64);
  }

  /**
   * Underground before the first step: the chunks within 2 of the start are generated, their springs flow
   * until they settle (vanilla worlds are generated long before a player arrives), and monsters spawn.
   */
  private startUnderground(): void {
    const e = this.entity;
    const cx = Math.floor(e.pos.x / 16),
      cz = Math.floor(e.pos.z / 16);
    for (let dx = -2; dx <= 2; dx++) for (let dz = -2; dz <= 2; dz++) this.world.column(cx + dx, cz + dz);
    for (let t = 0; t < 600 && this.world.pendingFluidTicks > 0; t++) this.world.tick(e.pos.x, e.pos.z, true);
    spawnMonsters(this.mobWorld, SPAWN_ATTEMPTS_AT_START);
  }

  /** One use of the held tool (2 for a tool used off its purpose, DiggerItem/SwordItem); it breaks when worn out. */
  private wearTool(uses: number): void {
    const held = this.held;
    if (held === null) return;
    const max = mcData.itemsByName[held]?.maxDurability;
    if (!max) return;
    const wear = (this.toolWear.get(held) ?? 0) + uses;
    if (wear >= max) {
      this.toolWear.delete(held);
      this.give(held, -1);
    } else this.toolWear.set(held, wear);
  }

  private observe(features: Float32Array, offset: number): StepObservation {
    const e = this.entity;
    const pose = { x: e.pos.x, y: e.pos.y, z: e.pos.z, yaw: e.yaw, pitch: e.pitch };
    observeView(this.world, pose, this.mobs, this.view);
    const relYaw = wrapAngle(this.startYaw - e.yaw);
    writeFeatures(
      this.view,
      pose,
      this.mobs,
      {
        health: this.rules.hp / 2,
        food: 20,
        inventory: this.inventory,
        held: this.held,
        onGround: e.onGround,
        inWater: e.isInWater,
        inLava: e.isInLava,
        yOffset: e.pos.y - this.startY,
        relYaw,
        digProgress: this.digProgress(),
        lastAction: this.lastAction,
      },
      this.memory,
      features,
      offset,
    );
    const change: Record<string, number> = {};
    for (const [k, v] of this.change) if (v !== 0) change[k] = v;
    return {
      nearest: nearestDict(this.view),
      inventory_change: change,
      health: this.rules.hp / 2,
      position: [round3(e.pos.x), round3(e.pos.y), round3(e.pos.z), round3(relYaw / DEG), round3((this.startPitch - e.pitch) / DEG)],
      damage_dealt: this.damageDealt,
      kill_entity: this.killsStep,
    };
  }
}
