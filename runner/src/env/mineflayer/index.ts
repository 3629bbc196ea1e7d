// The mineflayer backend: one mineflayer bot per environment on a Minecraft 1.16.5 server, by default an
// embedded flying-squid per environment serving the simulator's world for the episode's seed (server.ts), or
// an external vanilla/Paper server given as host:port. The agent's movement is stepped in lock-step: the bot
// runs with `physicsEnabled: false` and each step advances prismarine-physics one tick on the bot's own view of
// the world (the same engine, tick and action semantics as the simulator), then reports the new position to
// the server. Everything the server decides (health, inventory, broken blocks, mobs) runs in the server's real
// time, so steps are paced to one game tick (50 ms) by default. The observation and the policy features are
// the game's shared code (../game/observe.ts) run against the bot's world and entities.
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
import { Vec3 } from 'vec3';
import { Physics, type PhysicsEntity } from 'prismarine-physics';
import { DEFAULT_GAME_VERSION } from '../../schema';
import { successCheck, type StepProgress, type TaskSpec } from '../../tasks';
import { type DeathCause, type EnvOptions, HOLD_ACTION, type StepInfo, type StepObservation, type VecEnv, type VecStepResult } from '../types';
import { BLOCK_COUNT, mcData, nameIndex } from '../game/registry';
import { DEG, ViewResult, nearestDict, observeView, round3, wrapAngle, type BlockAccess, type ViewEntity, type ViewPose } from '../game/observe';
import { FEATURE_SPEC, FeatureMemory, writeFeatures } from '../game/features';
import {
  ENTITY_REACH,
  JumpPlace,
  LookRay,
  applyAction,
  blockUnderFoot,
  digTicksNeeded,
  newPlayerEntity,
  placePlayer,
  targetBlock,
  type BlockHit,
  type GameActions,
} from '../game/rules';
import { spawnPoint, type SpawnPoint } from '../game/worldgen';
import { nextEpisodeSeed } from '../../seeds';
import { startEmbeddedServer, type EmbeddedServer } from './server';

const require = createRequire(__filename);
/* eslint-disable @typescript-eslint/no-explicit-any -- mineflayer's Bot is used through a few fields only */
type Bot = any;

/** One game tick: the default wall-clock length of a step, so server-side rules see game-speed time. */
export const TICK_MS = 50;

export interface MineflayerOptions {
  /** Wall-clock milliseconds per step (0: as fast as possible; server-side rules then lag behind). */
  tickMs?: number;
  /** Bound on connecting, spawning and each episode reset. */
  timeoutMs?: number;
}

/** A dropped connection, a kick or a server that stopped answering: the env cannot go on. */
export class ServerConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServerConnectionError';
  }
}

/** Parses `host:port` (IPv6 in brackets). */
export function parseServerAddress(server: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(server.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port > 0 && port < 65536)) throw new Error(`--server must be host:port (e.g. 127.0.0.1:25565), got "${server}"`);
  return { host: (m[1] ?? m[2])!, port };
}

/**
 * Block state ids from the bot's world; unloaded chunks read as air. Columns are looked up once per step
 * (`newStep` forgets them, since the server may replace a column between steps): the view casts ~15,000
 * cell lookups per step and prismarine-world's own lookup builds a string key each time.
 */
class BotBlocks implements BlockAccess {
  private readonly p = new Vec3(0, 0, 0);
  private readonly columns = new Map<number, { getBlockStateId(p: Vec3): number } | null>();
  private lastKey = NaN;
  private lastColumn: { getBlockStateId(p: Vec3): number } | null = null;
  constructor(private readonly bot: Bot) {}
  newStep(): void {
    this.columns.clear();
    this.lastKey = NaN;
  }
  /** Whether the server has sent the chunk column (cx, cz); an unsent one reads as air. */
  hasColumn(cx: number, cz: number): boolean {
    return this.bot.world.getColumn(cx, cz) != null;
  }
  stateAt(x: number, y: number, z: number): number {
    if (y < 0 || y > 255) return 0;
    const cx = x >> 4,
      cz = z >> 4;
    const key = (cx + 32768) * 65536 + (cz + 32768);
    if (key !== this.lastKey) {
      let col = this.columns.get(key);
      if (col === undefined) {
        col = (this.bot.world.getColumn(cx, cz) as { getBlockStateId(p: Vec3): number } | undefined) ?? null;
        this.columns.set(key, col);
      }
      this.lastKey = key;
      this.lastColumn = col;
    }
    if (this.lastColumn === null) return 0;
    this.p.x = x & 15;
    this.p.y = y;
    this.p.z = z & 15;
    return this.lastColumn.getBlockStateId(this.p);
  }
}

/** Where an episode of `task` on `seed` starts (the simulator's spawn; underground at the task's y). */
function startSpawn(task: TaskSpec, seed: number): SpawnPoint {
  const spawn = spawnPoint(task.world, seed);
  if (task.startY !== 'surface') spawn.y = task.startY;
  return spawn;
}

/** One environment: a bot, its server (embedded or external) and the episode state the reward needs. */
class MineflayerAgent {
  bot: Bot = null;
  private blocks!: BotBlocks;
  private failure: Error | null = null;
  private onFailure: ((e: Error) => void) | null = null;
  private physics: ReturnType<typeof Physics> | null = null;
  private readonly entity: PhysicsEntity;
  private readonly memory = new FeatureMemory();
  private readonly view = new ViewResult();
  /** The task's success rule, over this env's kills and view. */
  private readonly succeeded: (p: StepProgress) => boolean;
  private readonly progress: StepProgress;
  private steps = 0;
  private startY = 0;
  private startYaw = 0;
  private lastAction = -1;
  private prevInventory = new Map<string, number>();
  private readonly kills = new Map<string, number>();
  private dig: { x: number; y: number; z: number; ticks: number; needed: number } | null = null;
  private readonly ray = new LookRay();
  private readonly hit: BlockHit = { x: 0, y: 0, z: 0, t: 0 };
  private readonly jumpPlace = new JumpPlace();
  private readonly actions: GameActions = {
    attack: () => this.attack(),
    equipNext: () => this.equipNext(),
    startJumpPlace: () => this.jumpPlace.start(this.entity, this.heldName()),
    stopDigging: () => {
      if (this.dig) this.cancelDig();
    },
  };
  private readonly username: string;
  /** The mob last attacked and the kills seen since the last step (external servers; the embedded one reports). */
  private lastHit: unknown = null;
  private pendingKills: Record<string, number> = {};
  /** The connection has ended; how many teleports (position packets) the bot has applied. */
  private ended = false;
  private forcedMoves = 0;

  constructor(
    readonly task: TaskSpec,
    readonly index: number,
    readonly host: string,
    readonly port: number,
    readonly embedded: EmbeddedServer | null,
    private readonly timeoutMs: number,
  ) {
    this.succeeded = successCheck(task, nameIndex);
    this.progress = { kills: this.kills, dist: this.view.dist };
    this.username = `rewardsmith${index}`;
    this.entity = newPlayerEntity();
  }

  private where(): string {
    return `mineflayer env ${this.index} (server ${this.host}:${this.port}${this.embedded ? ', embedded flying-squid' : ''})`;
  }

  private fail(reason: string): void {
    if (this.failure) return;
    this.failure = new ServerConnectionError(`${this.where()}: ${reason} (episode step ${this.steps})`);
    this.onFailure?.(this.failure);
  }

  private check(): void {
    if (this.failure) throw this.failure;
  }

  /** Resolves when `ready()` holds, polling; rejects on connection failure or after the timeout. */
  private async until(what: string, ready: () => boolean): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    while (!ready()) {
      this.check();
      if (Date.now() > deadline) throw new ServerConnectionError(`${this.where()}: timed out after ${this.timeoutMs} ms waiting for ${what}`);
      await sleep(10);
    }
    this.check();
  }

  /** `work`, unless the connection fails or the timeout passes first. */
  private async bounded<T>(what: string, work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const stop = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ServerConnectionError(`${this.where()}: timed out after ${this.timeoutMs} ms waiting for ${what}`)), this.timeoutMs);
      this.onFailure = reject;
      if (this.failure) reject(this.failure);
    });
    try {
      return await Promise.race([work, stop]);
    } finally {
      clearTimeout(timer);
      this.onFailure = null;
    }
  }

  async connect(): Promise<void> {
    const mineflayer = require('mineflayer');
    const bot: Bot = mineflayer.createBot({
      host: this.host,
      port: this.port,
      username: this.username,
      version: DEFAULT_GAME_VERSION,
      auth: 'offline',
      physicsEnabled: false,
      respawn: false,
      checkTimeoutInterval: Math.max(5_000, this.timeoutMs),
      logErrors: false,
      hideErrors: true,
    });
    this.bot = bot;
    this.blocks = new BotBlocks(bot);
    bot.on('error', (e: Error) => this.fail(`connection error: ${e.message}`));
    bot.on('kicked', (reason: unknown) => this.fail(`kicked by the server: ${typeof reason === 'string' ? reason : JSON.stringify(reason)}`));
    bot.on('end', (reason: unknown) => {
      this.ended = true;
      this.fail(`connection closed${reason ? ` (${String(reason)})` : ''}`);
    });
    // The server moved the player (teleport, respawn): the physics state follows.
    bot.on('forcedMove', () => {
      this.forcedMoves++;
      this.entity.pos.set(bot.entity.position.x, bot.entity.position.y, bot.entity.position.z);
      this.entity.vel.set(0, 0, 0);
    });
    bot.on('entityDead', (e: { name?: string }) => {
      // On an external server kills are seen as death animations of mobs the agent last hit; the embedded
      // server reports them exactly (takeEvents).
      if (!this.embedded && e.name && this.lastHit === e) this.pendingKills[e.name] = (this.pendingKills[e.name] ?? 0) + 1;
    });
    let spawned = false;
    bot.once('spawn', () => (spawned = true));
    await this.until('the bot to spawn', () => spawned);
    // flying-squid finishes a login when the client sends a `look` or `flying` packet; a lock-stepped bot
    // sends neither on its own (mineflayer's tick sends full positions), so send looks until it is done.
    if (this.embedded) {
      await this.until('the end of the login sequence', () => {
        bot._client.write('look', { yaw: 0, pitch: 0, onGround: true });
        return this.embedded!.loggedIn(this.username);
      });
    }
    this.physics = Physics(mcData, { getBlock: (pos: Vec3) => bot.blockAt(pos, false) });
  }

  /** Starts an episode on `seed`'s world (embedded) or where the external server has the player. */
  async reset(seed: number, features: Float32Array, offset: number): Promise<StepObservation> {
    this.check();
    const bot = this.bot;
    const spawn = startSpawn(this.task, seed >>> 0);
    if (this.embedded) {
      await this.bounded(
        'the server to start the episode',
        this.embedded.startEpisode(this.username, {
          seed: seed >>> 0,
          kind: this.task.world,
          spawn,
          inventory: this.task.inventory,
          mobs: this.task.world === 'plains',
        }),
      );
      this.embedded.takeEvents(this.username);
      const near = () =>
        bot.entity?.position &&
        Math.abs(bot.entity.position.x - spawn.x) < 1e-6 &&
        Math.abs(bot.entity.position.y - spawn.y) < 1e-6 &&
        Math.abs(bot.entity.position.z - spawn.z) < 1e-6;
      await this.until(
        'the episode start (spawn position, chunks, full health, inventory)',
        () =>
          // Every teleport the server sent has arrived (a late one would pull the agent back mid-episode).
          this.forcedMoves >= this.embedded!.positionsSent(this.username) &&
          near() &&
          bot.health === 20 &&
          bot.blockAt(bot.entity.position.offset(0, -1, 0)) !== null &&
          Object.entries(this.task.inventory).every(([name, n]) => this.count(name) === n),
      );
    } else {
      if (!bot.isAlive || bot.health <= 0) {
        bot.respawn();
        await this.until('the respawn', () => bot.health > 0);
      }
      await this.until('the chunk under the player', () => bot.blockAt(bot.entity.position.offset(0, -1, 0)) !== null);
      spawn.x = bot.entity.position.x;
      spawn.y = bot.entity.position.y;
      spawn.z = bot.entity.position.z;
      spawn.yaw = bot.entity.yaw;
    }
    bot.setQuickBarSlot(0);
    placePlayer(this.entity, spawn.x, spawn.y, spawn.z, spawn.yaw);
    this.startY = spawn.y;
    this.startYaw = spawn.yaw;
    this.steps = 0;
    this.lastAction = -1;
    this.dig = null;
    this.jumpPlace.reset();
    this.kills.clear();
    this.pendingKills = {};
    this.memory.reset();
    this.sendPose();
    this.prevInventory = this.inventory();
    return this.observe(features, offset, {}, 0, {});
  }

  private count(name: string): number {
    return this.inventory().get(name) ?? 0;
  }

  private inventory(): Map<string, number> {
    const out = new Map<string, number>();
    for (const item of this.bot.inventory.items() as { name: string; count: number }[]) out.set(item.name, (out.get(item.name) ?? 0) + item.count);
    return out;
  }

  private heldName(): string | null {
    return this.bot.heldItem?.name ?? null;
  }

  /** Mirrors the physics state into the bot and tells the server (mineflayer's tick also resends it). */
  private sendPose(): void {
    const bot = this.bot,
      e = this.entity;
    bot.entity.position.set(e.pos.x, e.pos.y, e.pos.z);
    bot.entity.velocity.set(e.vel.x, e.vel.y, e.vel.z);
    bot.entity.yaw = e.yaw;
    bot.entity.pitch = e.pitch;
    bot.entity.onGround = e.onGround;
    bot._client.write('position_look', {
      x: e.pos.x,
      y: e.pos.y,
      z: e.pos.z,
      yaw: (180 - e.yaw / DEG) % 360,
      pitch: -e.pitch / DEG,
      onGround: e.onGround,
    });
  }

  /** Applies one action for one tick; call `finishStep` after the batch has yielded to the network. */
  applyAction(action: number): void {
    this.check();
    this.blocks.newStep();
    this.steps++;
    const e = this.entity;
    applyAction(e, action, this.actions);
    if (this.bot.health > 0) {
      this.physics!.simulatePlayer(e, { getBlock: (pos: Vec3) => this.bot.blockAt(pos, false) });
      this.finishJumpPlace();
    }
    this.sendPose();
    this.lastAction = action;
  }

  /** Reads what the server made of the step and writes the observation and features. */
  finishStep(features: Float32Array, offset: number): { obs: StepObservation; info: StepInfo } {
    this.check();
    const bot = this.bot;
    const inv = this.inventory();
    const change: Record<string, number> = {};
    for (const [k, v] of inv) if (v !== (this.prevInventory.get(k) ?? 0)) change[k] = v - (this.prevInventory.get(k) ?? 0);
    for (const [k, v] of this.prevInventory) if (!inv.has(k)) change[k] = -v;
    this.prevInventory = inv;
    let damageDealt = 0;
    let killsStep: Record<string, number>;
    let deathCause: DeathCause | null = null;
    if (this.embedded) {
      const ev = this.embedded.takeEvents(this.username);
      damageDealt = ev.damageDealt;
      killsStep = ev.kills;
      deathCause = ev.deathCause;
    } else {
      killsStep = this.pendingKills;
      this.pendingKills = {};
    }
    for (const [k, n] of Object.entries(killsStep)) this.kills.set(k, (this.kills.get(k) ?? 0) + n);
    const obs = this.observe(features, offset, change, damageDealt, killsStep);
    const died = bot.health <= 0;
    if (died && !deathCause) deathCause = this.entity.isInLava ? 'lava' : 'other';
    const success = !died && this.succeeded(this.progress);
    const truncated = !died && !success && this.steps >= this.task.maxSteps;
    const info: StepInfo = {
      step: this.steps,
      success,
      done: died || success || truncated,
      truncated,
      died,
      deathCause: died ? deathCause : null,
      blockUnderFoot: blockUnderFoot(this.blocks, this.entity),
      inventory: Object.fromEntries(inv),
    };
    return { obs, info };
  }

  private attack(): void {
    const bot = this.bot;
    const block = targetBlock(this.blocks, this.ray.from(this.entity), this.hit) ? this.hit : null;
    const mob = bot.entityAtCursor(Math.min(ENTITY_REACH, block ? block.t : Infinity));
    if (mob && mob.type === 'mob') {
      if (this.dig) this.cancelDig();
      this.lastHit = mob;
      bot.attack(mob);
      return;
    }
    if (!block) {
      if (this.dig) this.cancelDig();
      return;
    }
    const location = { x: block.x, y: block.y, z: block.z };
    if (!this.dig || this.dig.x !== block.x || this.dig.y !== block.y || this.dig.z !== block.z) {
      if (this.dig) this.cancelDig();
      const target = bot.blockAt(new Vec3(block.x, block.y, block.z), false);
      const heldId = bot.heldItem ? bot.heldItem.type : null;
      this.dig = { ...location, ticks: 0, needed: digTicksNeeded(target, heldId, this.entity) };
      bot._client.write('block_dig', { status: 0, location, face: 1 });
    }
    bot.swingArm('right');
    this.dig.ticks++;
    if (this.dig.ticks >= this.dig.needed) {
      bot._client.write('block_dig', { status: 2, location, face: 1 });
      // Lock-step: the block is gone this step in the bot's world too; the server's block_change follows.
      bot.world.setBlockStateId(new Vec3(block.x, block.y, block.z), 0);
      this.dig = null;
    }
  }

  private cancelDig(): void {
    const d = this.dig!;
    this.bot._client.write('block_dig', { status: 1, location: { x: d.x, y: d.y, z: d.z }, face: 1 });
    this.dig = null;
  }

  /** Next hotbar slot holding an item (the simulator cycles its inventory the same way). */
  private equipNext(): void {
    const slots = this.bot.inventory.slots as (unknown | null)[];
    const current = this.bot.quickBarSlot as number;
    for (let k = 1; k <= 9; k++) {
      const s = (current + k) % 9;
      if (slots[36 + s]) {
        this.bot.setQuickBarSlot(s);
        return;
      }
    }
  }

  /** Places the held block where the feet were once the jump has lifted the player clear (the simulator's rule). */
  private finishJumpPlace(): void {
    const block = this.jumpPlace.due(this.entity, this.heldName());
    if (!block) return;
    const p = this.entity.pos,
      y = this.jumpPlace.y;
    const x = Math.floor(p.x),
      z = Math.floor(p.z);
    this.bot._client.write('block_place', {
      location: { x, y: y - 1, z },
      direction: 1,
      hand: 0,
      cursorX: 0.5,
      cursorY: 1,
      cursorZ: 0.5,
      insideBlock: false,
    });
    this.bot.world.setBlockStateId(new Vec3(x, y, z), block.defaultState ?? block.minStateId ?? block.id);
    this.jumpPlace.placed();
  }

  private mobs(): ViewEntity[] {
    const out: ViewEntity[] = [];
    for (const ent of Object.values(this.bot.entities) as { type: string; name?: string; position: Vec3; width?: number; height?: number }[]) {
      if (ent.type !== 'mob' || !ent.name) continue;
      const i = nameIndex(ent.name);
      if (i < BLOCK_COUNT) continue;
      out.push({ nameIndex: i, x: ent.position.x, y: ent.position.y, z: ent.position.z, width: ent.width ?? 0.9, height: ent.height ?? 1.4 });
    }
    return out;
  }

  /** What this bot knows from the protocol (its world's blocks, the mobs it was sent) and its pose. */
  protocolView(): { blocks: BotBlocks; entities: ViewEntity[]; pose: ViewPose } {
    const e = this.entity;
    this.blocks.newStep();
    return { blocks: this.blocks, entities: this.mobs(), pose: { x: e.pos.x, y: e.pos.y, z: e.pos.z, yaw: e.yaw, pitch: e.pitch } };
  }

  private observe(features: Float32Array, offset: number, change: Record<string, number>, damageDealt: number, kills: Record<string, number>): StepObservation {
    const e = this.entity;
    const { pose, entities: mobs } = this.protocolView();
    observeView(this.blocks, pose, mobs, this.view);
    const relYaw = wrapAngle(this.startYaw - e.yaw);
    const health = Math.max(0, this.bot.health) / 2;
    const dig = this.dig && Number.isFinite(this.dig.needed) ? this.dig.ticks / this.dig.needed : 0;
    writeFeatures(
      this.view,
      pose,
      mobs,
      {
        health,
        food: this.bot.food ?? 20,
        inventory: this.inventory(),
        held: this.heldName(),
        onGround: e.onGround,
        inWater: e.isInWater,
        inLava: e.isInLava,
        yOffset: e.pos.y - this.startY,
        relYaw,
        digProgress: dig,
        lastAction: this.lastAction,
      },
      this.memory,
      features,
      offset,
    );
    return {
      nearest: nearestDict(this.view),
      inventory_change: change,
      health,
      position: [round3(e.pos.x), round3(e.pos.y), round3(e.pos.z), round3(relYaw / DEG), round3(-e.pitch / DEG)],
      damage_dealt: damageDealt,
      kill_entity: kills,
    };
  }

  async close(): Promise<void> {
    const bot = this.bot;
    if (!bot) return;
    this.failure ??= new ServerConnectionError(`${this.where()}: closed`);
    if (!this.ended) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        bot.once('end', () => {
          clearTimeout(timer);
          resolve();
        });
        bot.quit();
      });
    }
    // minecraft-protocol's end() leaves a 30 s timer to destroy a socket that does not close by itself.
    clearTimeout(bot._client.closeTimer);
    bot._client.socket?.destroy();
  }
}

export class MineflayerVecEnv implements VecEnv {
  readonly backend = 'mineflayer' as const;
  readonly featureSize: number;
  private readonly seeds: number[];
  private lastStepAt = 0;

  constructor(
    readonly task: TaskSpec,
    private readonly agents: MineflayerAgent[],
    private readonly servers: EmbeddedServer[],
    private readonly tickMs: number,
  ) {
    this.featureSize = FEATURE_SPEC.size;
    this.seeds = new Array<number>(agents.length).fill(0);
  }

  get numEnvs(): number {
    return this.agents.length;
  }

  /**
   * Env `i`'s bot's own protocol view — the blocks of its world and the mobs the server sent it, as the
   * observation reads them — and its pose. For checks against the simulator (parity tests).
   */
  protocolView(i: number): { blocks: BlockAccess & { hasColumn(cx: number, cz: number): boolean }; entities: ViewEntity[]; pose: ViewPose } {
    return this.agents[i]!.protocolView();
  }

  /** Env `i`'s embedded flying-squid (null on an external server). */
  embeddedServer(i: number): EmbeddedServer | null {
    return this.agents[i]!.embedded;
  }

  async reset(seeds: number[]): Promise<{ features: Float32Array; obs: StepObservation[] }> {
    if (seeds.length !== this.agents.length) throw new Error(`reset needs ${this.agents.length} seeds, got ${seeds.length}`);
    const features = new Float32Array(this.agents.length * this.featureSize);
    const obs = await Promise.all(
      this.agents.map((a, i) => {
        this.seeds[i] = seeds[i]! >>> 0;
        return a.reset(this.seeds[i]!, features, i * this.featureSize);
      }),
    );
    this.lastStepAt = performance.now();
    return { features, obs };
  }

  async step(actions: Int32Array): Promise<VecStepResult> {
    const n = this.agents.length,
      f = this.featureSize;
    // A held env plays no_op: a bot cannot pause its world.
    for (let i = 0; i < n; i++) this.agents[i]!.applyAction(actions[i] === HOLD_ACTION ? 0 : actions[i]!);
    // Let the server answer (block changes, inventory, health) and keep game speed: a step lasts one tick.
    const wait = this.tickMs - (performance.now() - this.lastStepAt);
    await sleep(Math.max(0, wait));
    await new Promise((r) => setImmediate(r));
    this.lastStepAt = performance.now();
    const features = new Float32Array(n * f);
    const obs: StepObservation[] = new Array(n);
    const info: StepInfo[] = new Array(n);
    const resetObs: (StepObservation | null)[] = new Array(n).fill(null);
    const terminalFeatures: (Float32Array | null)[] = new Array(n).fill(null);
    for (let i = 0; i < n; i++) {
      const r = this.agents[i]!.finishStep(features, i * f);
      obs[i] = r.obs;
      info[i] = r.info;
      if (r.info.truncated) terminalFeatures[i] = features.slice(i * f, (i + 1) * f);
    }
    await Promise.all(
      this.agents.map(async (a, i) => {
        if (!info[i]!.done) return;
        this.seeds[i] = nextEpisodeSeed(this.seeds[i]!, i);
        resetObs[i] = await a.reset(this.seeds[i]!, features, i * f);
      }),
    );
    return { features, obs, info, resetObs, terminalFeatures };
  }

  async close(): Promise<void> {
    await Promise.all(this.agents.map((a) => a.close()));
    await Promise.all(this.servers.map((s) => s.close()));
  }
}

/**
 * Connects `opts.numEnvs` bots: each to its own embedded flying-squid (so each env has its own world), or all
 * to the external server `opts.server` (host:port). Rejects with a ServerConnectionError, never hangs.
 */
export async function createMineflayerEnv(opts: EnvOptions, more: MineflayerOptions = {}): Promise<MineflayerVecEnv> {
  const timeoutMs = more.timeoutMs ?? 30_000;
  const tickMs = more.tickMs ?? TICK_MS;
  const servers: EmbeddedServer[] = [];
  const agents: MineflayerAgent[] = [];
  try {
    for (let i = 0; i < opts.numEnvs; i++) {
      let host: string,
        port: number,
        embedded: EmbeddedServer | null = null;
      if (opts.server) ({ host, port } = parseServerAddress(opts.server));
      else {
        embedded = await startEmbeddedServer(opts.task.world, opts.seed >>> 0, startSpawn(opts.task, opts.seed >>> 0), timeoutMs);
        servers.push(embedded);
        ({ host, port } = embedded);
      }
      const agent = new MineflayerAgent(opts.task, i, host, port, embedded, timeoutMs);
      agents.push(agent);
      await agent.connect();
    }
  } catch (e) {
    await Promise.all(agents.map((a) => a.close()));
    await Promise.all(servers.map((s) => s.close()));
    throw e;
  }
  return new MineflayerVecEnv(opts.task, agents, servers, tickMs);
}
