// The agent's action semantics and the player's game rules, one implementation for both backends: the simulator
// (sim.ts) applies them to its own world; the mineflayer backend to the bot's view of the server's world
// (../mineflayer/index.ts) and, for the player rules, in the embedded server's rules plugin
// (../mineflayer/server.ts). They take the state they act on as parameters and allocate nothing: SimEnv calls
// them every tick.
import { Vec3 } from 'vec3';
import type { PhysicsEntity } from 'prismarine-physics';
import { GAME_FACTS } from '../../schema';
import type { DeathCause } from '../types';
import { LAVA_BLOCK, WATER_BLOCK, S, blockNames, mcData, stateToBlock as toBlockTable } from './registry';
import { DEG, EYE_HEIGHT, type BlockAccess } from './observe';

// Module-local aliases: imported bindings compile to getter calls under tsx (see sim.ts).
const stateToBlock = toBlockTable;
const AIR = S.air,
  CAVE_AIR = S.cave_air,
  WATER = WATER_BLOCK,
  LAVA = LAVA_BLOCK;
const TURN = GAME_FACTS.turnDeg * DEG;
/** Action indices by name (the policy's action space, GAME_FACTS.actions). */
const A = Object.fromEntries(GAME_FACTS.actions.map((a, i) => [a, i])) as Record<(typeof GAME_FACTS.actions)[number], number>;

// Game rules (Minecraft 1.16 values, in ticks and health points; the player has 20 hp = 10 hearts).
export const MAX_HP = 20;
const BLOCK_REACH = 4.5;
export const ENTITY_REACH = 3;
export const INVULNERABLE_TICKS = 10;
const LAVA_DAMAGE = 4;
const LAVA_FIRE_TICKS = 300;
const FIRE_BLOCK_FIRE_TICKS = 160;
const BURN_INTERVAL = 20;
const SAFE_FALL = 3;
const MAX_AIR = 300;
const REGEN_INTERVAL = 80; // natural regeneration with a full hunger bar and no saturation
/** Ticks between a jump_place action and giving up on placing (the jump has not lifted the player clear). */
const PLACE_WINDOW = 10;

/** A player entity for prismarine-physics, standing still at the origin. */
export function newPlayerEntity(): PhysicsEntity {
  return {
    pos: new Vec3(0, 0, 0),
    vel: new Vec3(0, 0, 0),
    onGround: false,
    isInWater: false,
    isInLava: false,
    isInWeb: false,
    isCollidedHorizontally: false,
    isCollidedVertically: false,
    elytraFlying: false,
    jumpTicks: 0,
    jumpQueued: false,
    fireworkRocketDuration: 0,
    attributes: undefined,
    yaw: 0,
    pitch: 0,
    control: { forward: false, back: false, left: false, right: false, jump: false, sprint: false, sneak: false },
    jumpBoost: 0,
    speed: 0,
    slowness: 0,
    dolphinsGrace: 0,
    slowFalling: 0,
    levitation: 0,
    depthStrider: 0,
    elytraEquipped: false,
  };
}

/** Puts the player at an episode's start: standing on the ground at (x, y, z), looking level along `yaw`. */
export function placePlayer(e: PhysicsEntity, x: number, y: number, z: number, yaw: number): void {
  e.pos.set(x, y, z);
  e.vel.set(0, 0, 0);
  e.yaw = yaw;
  e.pitch = 0;
  e.onGround = true;
  e.isInWater = e.isInLava = false;
  e.jumpTicks = 0;
  e.jumpQueued = false;
}

/** The actions that act on the world and the inventory, as each backend carries them out. */
export interface GameActions {
  attack(): void;
  equipNext(): void;
  /** jump_place, besides the jump (JumpPlace keeps the rule). */
  startJumpPlace(): void;
  /** Every action but attack stops digging. */
  stopDigging(): void;
}

/** One tick of `action`: sets the movement controls, turns the look (GAME_FACTS.turnDeg) or calls `game`. */
export function applyAction(e: PhysicsEntity, action: number, game: GameActions): void {
  const c = e.control;
  c.forward = c.back = c.left = c.right = c.jump = false;
  switch (action) {
    case A.turn_up:
      e.pitch = Math.min(Math.PI / 2, e.pitch + TURN);
      break;
    case A.turn_down:
      e.pitch = Math.max(-Math.PI / 2, e.pitch - TURN);
      break;
    case A.turn_left:
      e.yaw += TURN;
      break;
    case A.turn_right:
      e.yaw -= TURN;
      break;
    case A.forward:
      c.forward = true;
      break;
    case A.forward_jump:
      c.forward = true;
      c.jump = true;
      break;
    case A.jump:
      c.jump = true;
      break;
    case A.back:
      c.back = true;
      break;
    case A.move_left:
      c.left = true;
      break;
    case A.move_right:
      c.right = true;
      break;
    case A.attack:
      game.attack();
      break;
    case A.equip:
      game.equipNext();
      break;
    case A.jump_place:
      c.jump = true;
      game.startJumpPlace();
      break;
  }
  if (action !== A.attack) game.stopDigging();
}

/** The look ray: from the eyes, unit direction from yaw and pitch. Reused, so attacking allocates nothing. */
export class LookRay {
  ox = 0;
  oy = 0;
  oz = 0;
  dx = 0;
  dy = 0;
  dz = 0;
  from(e: PhysicsEntity): this {
    this.ox = e.pos.x;
    this.oy = e.pos.y + EYE_HEIGHT;
    this.oz = e.pos.z;
    const cp = Math.cos(e.pitch);
    this.dx = -Math.sin(e.yaw) * cp;
    this.dy = Math.sin(e.pitch);
    this.dz = -Math.cos(e.yaw) * cp;
    return this;
  }
}

/** A targeted block and the distance along the look ray at which it was found. */
export interface BlockHit {
  x: number;
  y: number;
  z: number;
  t: number;
}

/** The block the crosshair is on within block reach (airs and fluids are looked through): written to `hit`, true; else false. */
export function targetBlock(blocks: BlockAccess, ray: LookRay, hit: BlockHit): boolean {
  // Small fixed-step march: reach is 4.5 m, so 0.05 m steps cost ~90 lookups only on attack ticks.
  const { ox, oy, oz, dx, dy, dz } = ray;
  let lx = NaN,
    ly = NaN,
    lz = NaN;
  for (let t = 0; t <= BLOCK_REACH; t += 0.05) {
    const x = Math.floor(ox + dx * t),
      y = Math.floor(oy + dy * t),
      z = Math.floor(oz + dz * t);
    if (x === lx && y === ly && z === lz) continue;
    lx = x;
    ly = y;
    lz = z;
    const s = blocks.stateAt(x, y, z);
    const b = stateToBlock[s]!;
    if (s === AIR || s === CAVE_AIR || b === WATER || b === LAVA) continue;
    hit.x = x;
    hit.y = y;
    hit.z = z;
    hit.t = t;
    return true;
  }
  return false;
}

/** Ticks to break `block` (null: nothing diggable) holding item id `heldId` (null: the hand), at least 1. */
export function digTicksNeeded(
  block: { diggable: boolean; digTime(heldId: number | null, creative: boolean, inWater: boolean, notOnGround: boolean): number } | null,
  heldId: number | null,
  e: PhysicsEntity,
): number {
  const ms = block?.diggable ? block.digTime(heldId, false, e.isInWater, !e.onGround) : Infinity;
  return Math.max(1, Math.ceil(ms / 50));
}

/** jump_place: the held block goes where the feet were once the jump has lifted the player clear of it. */
export class JumpPlace {
  private pending = 0;
  /** The y of the cell the block goes into. */
  y = 0;
  reset(): void {
    this.pending = 0;
  }
  /** On a jump_place action: arms the placing when the held item is a block and the player can jump. */
  start(e: PhysicsEntity, held: string | null): void {
    if (held !== null && mcData.blocksByName[held] && e.onGround) {
      this.pending = PLACE_WINDOW;
      this.y = Math.floor(e.pos.y + 0.01);
    }
  }
  /** After a tick's physics: the block to place now at (⌊x⌋, y, ⌊z⌋), or null; call `placed` once it is. */
  due(e: PhysicsEntity, held: string | null) {
    if (this.pending <= 0) return null;
    this.pending--;
    if (e.pos.y < this.y + 1 || held === null) return null;
    return mcData.blocksByName[held] ?? null;
  }
  placed(): void {
    this.pending = 0;
  }
}

/** The name of the block under the player's feet. */
export function blockUnderFoot(blocks: BlockAccess, e: PhysicsEntity): string {
  const p = e.pos;
  return blockNames[stateToBlock[blocks.stateAt(Math.floor(p.x), Math.floor(p.y - 0.05), Math.floor(p.z))]!]!;
}

/**
 * The player's health and the rules that change it each tick: lava, fire and fall damage with the 10-tick hurt
 * immunity, burning, water putting fire out, drowning, natural regeneration (hunger held at maximum).
 */
export class PlayerRules {
  hp = MAX_HP;
  /** What the last lethal damage was; kept across `reset` until the owner has read it. */
  deathCause: DeathCause | null = null;
  private air = MAX_AIR;
  private fireTicks = 0;
  private invulnerable = 0;
  private lastHurt = 0;
  private regen = 0;
  private fallDistance = 0;

  reset(): void {
    this.hp = MAX_HP;
    this.air = MAX_AIR;
    this.fireTicks = this.invulnerable = this.lastHurt = this.regen = this.fallDistance = 0;
  }

  hurt(amount: number, cause: DeathCause): void {
    if (this.hp <= 0) return;
    if (this.invulnerable > 0) {
      // Hurt immunity: within 10 ticks of a hit only damage above the last hit's counts, and only the excess.
      if (amount <= this.lastHurt) return;
      const extra = amount - this.lastHurt;
      this.lastHurt = amount;
      amount = extra;
    } else {
      this.lastHurt = amount;
      this.invulnerable = INVULNERABLE_TICKS;
    }
    this.hp = Math.max(0, this.hp - amount);
    if (this.hp <= 0) this.deathCause = cause;
  }

  /**
   * One tick: where the player is (in lava, in a fire block, in water, eyes in water, on the ground), how far
   * it moved down since the last tick (`drop`, ≤ 0 for not at all) and whether it is below the world.
   */
  tick(inLava: boolean, inFire: boolean, inWater: boolean, eyesInWater: boolean, onGround: boolean, drop: number, belowWorld: boolean): void {
    if (this.invulnerable > 0) this.invulnerable--;
    // Fall damage: distance fallen since last on the ground, minus 3 blocks, on landing; fluids reset it.
    if (inWater || inLava) this.fallDistance = 0;
    else if (onGround) {
      if (this.fallDistance > SAFE_FALL) this.hurt(Math.ceil(this.fallDistance - SAFE_FALL), 'fall');
      this.fallDistance = 0;
    } else if (drop > 0) this.fallDistance += drop;
    // Lava sets the player on fire and burns 4 hp per hit; fire blocks ignite; water puts fire out.
    if (inLava) {
      this.fireTicks = LAVA_FIRE_TICKS;
      this.hurt(LAVA_DAMAGE, 'lava');
    } else if (inFire) {
      this.fireTicks = Math.max(this.fireTicks, FIRE_BLOCK_FIRE_TICKS);
      this.hurt(1, 'fire');
    }
    if (inWater) this.fireTicks = 0;
    if (this.fireTicks > 0) {
      this.fireTicks--;
      if (!inLava && this.fireTicks % BURN_INTERVAL === 0) this.hurt(1, 'fire');
    }
    // Drowning: 15 s of air with the eyes in water, then 2 hp per second; air refills quickly outside.
    if (eyesInWater) {
      if (--this.air <= -20) {
        this.air = 0;
        this.hurt(2, 'drowning');
      }
    } else this.air = Math.min(MAX_AIR, this.air + 4);
    if (belowWorld) this.hurt(MAX_HP, 'other');
    if (this.hp > 0 && this.hp < MAX_HP) {
      if (++this.regen >= REGEN_INTERVAL) {
        this.regen = 0;
        this.hp = Math.min(MAX_HP, this.hp + 1);
      }
    } else this.regen = 0;
  }
}
