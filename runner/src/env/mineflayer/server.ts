// The embedded Minecraft 1.16.5 server of the mineflayer backend: a flying-squid listening on a free loopback
// port, serving the simulator's generated world (the same `generateChunk` as the simulator, fed to
// flying-squid as a custom generator), plus the `rewardsmith-rules` server plugin that adds the game rules
// flying-squid lacks (lava, fire and fall damage, drowning, natural regeneration, a respawn at the spawn point, loot
// straight into the inventory) and the episode reset the environment drives. README.md next to this file says
// which rules hold on which server.
import { createRequire } from 'node:module';
import { Vec3 } from 'vec3';
import { DEFAULT_GAME_VERSION } from '../../schema';
import { VANILLA_WORLD, type TaskSpec, type WorldKind } from '../../tasks';
import type { DeathCause } from '../types';
import { FIRE_BLOCKS, LAVA_BLOCK, MOB_MAX_HEALTH, WATER_BLOCK, mcData, stateToBlock } from '../game/registry';
import { EYE_HEIGHT } from '../game/observe';
import { MAX_HP, PlayerRules } from '../game/rules';
import { ChunkFeatureCache, WORLD_BANDS, cellIndex, generateChunk, mobSpawns, type SpawnPoint } from '../game/worldgen';

// flying-squid, prismarine-world and prismarine-chunk ship no types; they are CommonJS, loaded with require.
const require = createRequire(__filename);

/* eslint-disable @typescript-eslint/no-explicit-any -- the untyped flying-squid object graph */
type Serv = any;
type Player = any;

/** One episode's start, as the environment asks for it. */
export interface EpisodeStart {
  seed: number;
  kind: WorldKind;
  spawn: SpawnPoint;
  inventory: TaskSpec['inventory'];
  /** Spawn the plains animals of this seed. */
  mobs: boolean;
}

/** Per-player rule state kept by the plugin. */
interface RuleState {
  start: EpisodeStart | null;
  /** The simulator's player rules; their `hp` mirrors the player's health during a tick. */
  rules: PlayerRules;
  /** The player's y at the last tick (null: none since the episode start or respawn), for fall damage. */
  lastY: number | null;
  /** Damage this player's attacks dealt to mobs, and kills by mob name, since the env last read them. */
  damageDealt: number;
  kills: Record<string, number>;
}

export interface EmbeddedServer {
  readonly host: string;
  readonly port: number;
  /** Moves `username` onto a fresh world of `start.seed`, at its spawn, with full health and the task inventory. */
  startEpisode(username: string, start: EpisodeStart): Promise<void>;
  /** How many position packets (teleports) the server has sent `username`; mineflayer counts them as forcedMove. */
  positionsSent(username: string): number;
  /** Whether flying-squid's login sequence for `username` is over (it ends by re-sending the login position). */
  loggedIn(username: string): boolean;
  /** The plugin's view of a player: death cause of its last death, damage and kills since the last call. */
  takeEvents(username: string): { deathCause: DeathCause | null; damageDealt: number; kills: Record<string, number> };
  /** The live flying-squid (tests use it to break things). */
  readonly serv: Serv;
  close(): Promise<void>;
}

const GENERATOR_NAME = 'rewardsmith';

/** A flying-squid generator (chunkX, chunkZ) → prismarine-chunk Column for the world (kind, seed). */
function makeGenerator(kind: WorldKind, seed: number): (cx: number, cz: number) => unknown {
  const Chunk = require('prismarine-chunk')(DEFAULT_GAME_VERSION);
  const band = WORLD_BANDS[kind];
  const top = kind === 'underground' ? 256 : band.minY + band.height; // plains: air above the band
  const features = new ChunkFeatureCache(seed, VANILLA_WORLD);
  return (cx: number, cz: number) => {
    const cells = generateChunk(kind, seed, cx, cz, undefined, VANILLA_WORLD, features);
    const chunk = new Chunk();
    const p = new Vec3(0, 0, 0);
    for (let y = 0; y < top; y++) {
      p.y = y;
      for (let lz = 0; lz < 16; lz++) {
        p.z = lz;
        for (let lx = 0; lx < 16; lx++) {
          p.x = lx;
          const s = y < band.minY ? band.below : y >= band.minY + band.height ? band.above : cells[cellIndex(lx, y - band.minY, lz)]!;
          if (s !== 0) chunk.setBlockStateId(p, s);
        }
      }
    }
    for (let lz = 0; lz < 16; lz++) for (let lx = 0; lx < 16; lx++) for (let y = 0; y < 256; y += 4) chunk.setSkyLight(new Vec3(lx, y, lz), 15);
    return chunk;
  };
}

/** Starts a flying-squid on 127.0.0.1 at a free port with the first world (kind, seed). */
/**
 * flying-squid's log plugin, when first loaded (at the first createMCServer), opens a readline prompt on
 * stdin/stdout: it would read the runner's stdin and write "> " into the `--events ndjson` stdout. The
 * plugins are loaded with createInterface replaced by an inert interface.
 */
function withInertReadline<T>(load: () => T): T {
  const readline = require('node:readline');
  const { createInterface, cursorTo } = readline;
  const inert = {
    setPrompt() {},
    prompt() {},
    on() {
      return inert;
    },
    close() {},
    line: '',
  };
  readline.createInterface = () => inert;
  readline.cursorTo = () => true; // its logger moves the cursor on stdout before checking noConsoleOutput
  try {
    return load();
  } finally {
    readline.createInterface = createInterface;
    readline.cursorTo = cursorTo;
  }
}

/**
 * flying-squid's log plugin registers `exit-hook`, whose SIGINT/SIGTERM handlers call process.exit() at once:
 * they would cut short the runner's own signal handling (a trainer saving its checkpoint). The signal
 * listeners that appeared since flying-squid was first loaded are removed (its `exit` hook, which quits the
 * servers, stays).
 */
let signalListenersBefore: Map<NodeJS.Signals, Function[]> | null = null;
function dropFlyingSquidSignalHandlers(): void {
  if (!signalListenersBefore) return;
  for (const [signal, before] of signalListenersBefore) {
    for (const listener of process.listeners(signal)) if (!before.includes(listener)) process.removeListener(signal, listener as (...args: unknown[]) => void);
  }
}

export async function startEmbeddedServer(kind: WorldKind, seed: number, spawn: SpawnPoint, timeoutMs = 20_000): Promise<EmbeddedServer> {
  signalListenersBefore ??= new Map((['SIGINT', 'SIGTERM'] as const).map((sig) => [sig, [...process.listeners(sig)]]));
  const flyingSquid = require('flying-squid');
  flyingSquid.generations[GENERATOR_NAME] = (options: { kind: WorldKind; worldSeed: number }) => makeGenerator(options.kind, options.worldSeed);
  const serv: Serv = withInertReadline(() =>
    flyingSquid.createMCServer({
      host: '127.0.0.1',
      port: 0,
      'online-mode': false,
      logging: false,
      noConsoleOutput: true,
      // A `debug` function also stops flying-squid from installing its process-wide uncaughtException handler,
      // which calls process.exit() (it would end the runner, or the test runner, on any error anywhere).
      debug: () => undefined,
      gameMode: 0,
      difficulty: 1,
      generation: { name: GENERATOR_NAME, options: { kind, worldSeed: seed } },
      'max-players': 16,
      // flying-squid sends chunks [c - v, c + v - 1] around the chunk c where it last sent chunks, and sends
      // again only after a 16 m move: v = 6 keeps every block within the agent's 64 m view distance loaded.
      'view-distance': 6,
      version: DEFAULT_GAME_VERSION,
      // The embedded server's players are this process's own bots: a keep-alive answered late means the process
      // was busy (a loaded machine stalls its event loop for seconds), not a client gone; a client that is gone
      // closes its socket. minecraft-protocol's default, 30 s, instead of 5 s, which kicked our own bots
      // ("KeepAliveTimeout") at load 20 and over.
      kickTimeout: 30_000,
      plugins: {},
      'everybody-op': true,
      'max-entities': 500,
      motd: 'rewardsmith',
      'player-list-text': { header: { text: '' }, footer: { text: '' } },
    }),
  );
  // Its logger moves the terminal cursor on stdout even with console output off; the runner owns stdout.
  serv.log = () => undefined;
  const failed = new Promise<never>((_, reject) => serv.once('error', (e: Error) => reject(new Error(`embedded flying-squid failed to start: ${e.message}`))));
  failed.catch(() => undefined);
  await Promise.race([serv.waitForReady(timeoutMs), failed]);
  dropFlyingSquidSignalHandlers();
  const port: number = serv._server.socketServer.address().port;
  const states = new Map<string, RuleState>();
  const stateOf = (username: string): RuleState => {
    let s = states.get(username);
    if (!s) {
      s = { start: null, rules: new PlayerRules(), lastY: null, damageDealt: 0, kills: {} };
      states.set(username, s);
    }
    return s;
  };
  installRules(serv, stateOf);
  // Players log in at the first episode's spawn (flying-squid's default looks for the surface from y 81, which
  // in the underground world is the top of the stone at y 256).
  serv.getSpawnPoint = async () => new Vec3(spawn.x, spawn.y, spawn.z);
  let closed = false;
  return {
    host: '127.0.0.1',
    port,
    serv,
    async startEpisode(username, start) {
      const player: Player = serv.players.find((p: Player) => p.username === username);
      if (!player) throw new Error(`player ${username} is not on the embedded server`);
      dropFlyingSquidSignalHandlers();
      const st = stateOf(username);
      st.start = start;
      st.rules.reset();
      st.rules.deathCause = null;
      Object.assign(st, { lastY: null, damageDealt: 0, kills: {} });
      // Remove the previous episode's mobs and dropped items.
      for (const e of Object.values(serv.entities) as any[]) if (e.type !== 'player') serv.destroyEntity(e);
      const spawn = new Vec3(start.spawn.x, start.spawn.y, start.spawn.z);
      serv.getSpawnPoint = async () => spawn.clone();
      // Always a fresh world: the last episode dug into this one. The player's chunks are unloaded (empty
      // chunk packets), the new world's are sent around the spawn. (flying-squid's changeWorld would also
      // wait for a movement packet a lock-stepped client does not send until it is told where it is.)
      player._unloadAllChunks();
      const World = require('prismarine-world')(DEFAULT_GAME_VERSION);
      serv.overworld = new World(makeGenerator(start.kind, start.seed));
      serv.overworld.blockEntityData = {};
      serv.overworld.portals = [];
      serv._worldChunksUsed = {};
      player.world = serv.overworld;
      player.spawnPoint = spawn.clone();
      player.position = spawn.clone();
      await player.worldSendInitialChunks();
      await player.worldSendRestOfChunks();
      player.updateHealth(MAX_HP);
      player.updateFood(20);
      player.updateFoodSaturation(5);
      const Item = require('prismarine-item')(DEFAULT_GAME_VERSION);
      for (let slot = 0; slot < player.inventory.slots.length; slot++) if (player.inventory.slots[slot]) player.inventory.updateSlot(slot, null);
      Object.entries(start.inventory).forEach(([name, count], i) => {
        const item = mcData.itemsByName[name];
        if (!item) throw new Error(`task inventory names "${name}", which is not a ${DEFAULT_GAME_VERSION} item`);
        player.inventory.updateSlot(36 + i, new Item(item.id, count));
      });
      if (start.mobs) {
        for (const m of mobSpawns(start.seed)) {
          const mob = serv.spawnMob(mcData.entitiesByName[m.type]!.id, serv.overworld, new Vec3(m.x, m.y, m.z));
          // flying-squid's mob physics sinks mobs into the ground; they stand still on their spawn instead.
          mob.gravity = new Vec3(0, 0, 0);
          mob.health = MOB_MAX_HEALTH[m.type] ?? 10;
        }
      }
      // The one position packet of the reset, sent last: the client starts the episode when it arrives, and a
      // later one would teleport it back to the spawn mid-episode.
      player.sendSelfPosition(spawn.clone());
    },
    positionsSent(username) {
      return serv.players.find((p: Player) => p.username === username)?.rewardsmithPositionsSent ?? 0;
    },
    loggedIn(username) {
      return serv.players.some((p: Player) => p.username === username && p.rewardsmithLoggedIn === true);
    },
    takeEvents(username) {
      const st = stateOf(username);
      const out = { deathCause: st.rules.deathCause, damageDealt: st.damageDealt, kills: st.kills };
      st.damageDealt = 0;
      st.kills = {};
      return out;
    },
    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        serv._server.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        serv.quit('Server closed');
      });
      serv.stopTickInterval?.();
    },
  };
}

/**
 * The `rewardsmith-rules` plugin: per server tick, for each player, lava/fire/fall/drowning damage with the 10-tick
 * hurt immunity, burning, water putting fire out, natural regeneration (hunger held at max); death records its
 * cause; the client's respawn request puts the player back at the episode's spawn (flying-squid's own respawn
 * never fires on 1.16 and would leave the player where it died, e.g. in the lava); broken blocks give their loot straight into the
 * inventory with the 1.16.5 loot table's chances and harvest-tool rule (flying-squid drops every table entry
 * as items, including silk-touch ones and stone dug by hand).
 */
function installRules(serv: Serv, stateOf: (username: string) => RuleState): void {
  const Item = require('prismarine-item')(DEFAULT_GAME_VERSION);
  const give = (player: Player, itemName: string, count: number) => {
    const item = mcData.itemsByName[itemName];
    if (!item || count <= 0) return;
    const slots: any[] = player.inventory.slots;
    for (let slot = 9; slot < 45; slot++) {
      const s = slots[slot];
      if (s && s.type === item.id && s.count + count <= item.stackSize) {
        s.count += count;
        player.inventory.updateSlot(slot, s);
        return;
      }
    }
    // Hotbar first, then the main inventory, like a pickup.
    for (const slot of [36, 37, 38, 39, 40, 41, 42, 43, 44, ...Array.from({ length: 27 }, (_, i) => 9 + i)]) {
      if (!slots[slot]) {
        player.inventory.updateSlot(slot, new Item(item.id, count));
        return;
      }
    }
  };

  serv.on('tick', () => {
    for (const player of serv.players as Player[]) {
      if (player.health <= 0 || !player.position) continue;
      const st = stateOf(player.username);
      if (!st.start) continue;
      const world = player.world;
      const pos = player.position;
      const stateAt = (x: number, y: number, z: number): number => {
        try {
          return world.sync.getBlockStateId(new Vec3(x, y, z));
        } catch {
          return 0;
        }
      };
      let inLava = false,
        inFire = false,
        inWater = false;
      for (let x = Math.floor(pos.x - 0.3); x <= Math.floor(pos.x + 0.3); x++) {
        for (let y = Math.floor(pos.y); y <= Math.floor(pos.y + 1.8); y++) {
          for (let z = Math.floor(pos.z - 0.3); z <= Math.floor(pos.z + 0.3); z++) {
            const b = stateToBlock[stateAt(x, y, z)]!;
            if (b === LAVA_BLOCK) inLava = true;
            else if (b === WATER_BLOCK) inWater = true;
            else if (FIRE_BLOCKS.has(b)) inFire = true;
          }
        }
      }
      const eyesInWater = stateToBlock[stateAt(Math.floor(pos.x), Math.floor(pos.y + EYE_HEIGHT), Math.floor(pos.z))] === WATER_BLOCK;
      // Falls are measured from the positions the client reports.
      const drop = st.lastY === null ? 0 : st.lastY - pos.y;
      st.lastY = pos.y;
      // The rules work on a copy of the health; the client is told the tick's outcome once.
      const rules = st.rules;
      rules.hp = player.health;
      rules.tick(inLava, inFire, inWater, eyesInWater, player.onGround, drop, false);
      if (rules.hp !== player.health) player.updateHealth(rules.hp);
    }
  });

  serv.on('newPlayer', (player: Player) => {
    // flying-squid's login starts a 5 s latency broadcast per player (a setInterval right after
    // `_sendPlayerList(player)`, which its player plugin has just defined) and never clears it: it would keep
    // the runner's process alive after close. The interval is captured at creation, cleared on leaving.
    const sendPlayerList = serv._sendPlayerList;
    serv._sendPlayerList = (target: Player) => {
      sendPlayerList(target);
      if (target !== player || player.rewardsmithLatencyTimer !== undefined) return;
      const setIntervalOriginal = globalThis.setInterval;
      const restore = () => {
        globalThis.setInterval = setIntervalOriginal;
      };
      globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
        restore();
        const timer = setIntervalOriginal(...args);
        player.rewardsmithLatencyTimer = timer;
        return timer;
      }) as typeof setInterval;
      queueMicrotask(restore);
    };
    player.on('disconnected', () => clearInterval(player.rewardsmithLatencyTimer));
    // Count teleports, so the env can wait until the client has applied the last one.
    const sendSelfPosition = player.sendSelfPosition;
    player.rewardsmithPositionsSent = 0;
    player.sendSelfPosition = (position?: unknown) => {
      player.rewardsmithPositionsSent++;
      return sendSelfPosition(position);
    };
    // The login sequence's last act is `player.save()`; until then it may still teleport the player.
    const save = player.save;
    player.save = async () => {
      player.rewardsmithLoggedIn = true;
      return save?.();
    };
    // flying-squid's respawn never fires on 1.16: the packet's action id arrives mapped to the string
    // 'perform_respawn' and flying-squid compares it with 0 (and its respawn would keep the player where it
    // died, e.g. in the lava). The plugin respawns the player at the episode's spawn (or the world spawn).
    player._client.on('client_command', (data: { actionId?: unknown; payload?: unknown }) => {
      const respawn = data.actionId === 'perform_respawn' || data.actionId === 0 || data.payload === 0;
      if (!respawn || player.health > 0) return;
      const st = stateOf(player.username);
      const at = st.start ? new Vec3(st.start.spawn.x, st.start.spawn.y, st.start.spawn.z) : player.spawnPoint;
      st.rules.reset();
      st.lastY = null;
      player._sendRespawn();
      player.sendSelfPosition(at);
      player.updateHealth(MAX_HP);
      player.nearbyEntities = [];
      player.updateAndSpawn();
    });
    player.on('dug', (data: { block: { name: string; harvestTools?: Record<string, boolean> }; dropBlock: boolean }) => {
      data.dropBlock = false;
      const held = player.inventory.slots[36 + player.heldItemSlot];
      const heldId: number | undefined = held?.type;
      const block = data.block;
      if (block.harvestTools && (heldId === undefined || !block.harvestTools[heldId])) return;
      const loot = mcData.blockLoot[block.name];
      if (!loot) return;
      for (const d of loot.drops) {
        if (d.silkTouch) continue;
        // minecraft-data splits "silk touch ? block : item" into two 0.5 entries; without silk touch the
        // no-silk-touch branch is certain.
        if (Math.random() >= (d.noSilkTouch ? 1 : d.dropChance)) continue;
        const min = d.stackSizeRange[0] ?? 1,
          max = d.stackSizeRange[1] ?? min;
        give(player, d.item, min + Math.floor(Math.random() * (max - min + 1)));
      }
    });
    // Damage dealt and kills, for the reward's `damage_dealt` / `kill_entity`: health before the hit
    // (flying-squid's `attack` behaviour) against health after it (`attack_done`).
    player.on('attack', (data: { attackedEntity: any; healthBefore?: number; velocity?: Vec3 }) => {
      data.healthBefore = data.attackedEntity?.health;
      // No knockback: mobs here have no gravity (see startEpisode), so a pushed mob would slide away forever.
      if (data.attackedEntity?.type !== 'player') data.velocity = new Vec3(0, 0, 0);
    });
    player.on('attack_done', (data: { attackedEntity: any; healthBefore?: number }, cancelled: boolean) => {
      const target = data.attackedEntity;
      if (cancelled || !target || target.type === 'player' || data.healthBefore === undefined) return;
      const st = stateOf(player.username);
      st.damageDealt += Math.max(0, data.healthBefore - Math.max(0, target.health));
      if (target.health <= 0 && data.healthBefore > 0) st.kills[target.name] = (st.kills[target.name] ?? 0) + 1;
    });
  });
}
