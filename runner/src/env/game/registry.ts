// Block and mob tables for the simulator and the shared observation code, built once from minecraft-data
// 1.16.5. Everything the hot loop touches is a typed array indexed by block state id (the 1.16.5 global
// palette, the same ids a real server sends), so no name-keyed lookups happen per tick.
import minecraftData from 'minecraft-data';
import { DEFAULT_GAME_VERSION, loadSchema } from '../../schema';

export const mcData = minecraftData(DEFAULT_GAME_VERSION);

const blocks = mcData.blocksArray;
export const STATE_COUNT = Math.max(...blocks.map((b) => b.maxStateId ?? b.id)) + 1;
export const BLOCK_COUNT = Math.max(...blocks.map((b) => b.id)) + 1;

/** Block id (index into `blockNames`) of each state id. */
export const stateToBlock = new Uint16Array(STATE_COUNT);
/** 1 where a ray stops: full-cube blocks and lava. Plants, fluids other than lava, glass-like air do not. */
export const stateOccludes = new Uint8Array(STATE_COUNT);
/** 1 where a state is seen at all (everything but the airs). */
export const stateVisible = new Uint8Array(STATE_COUNT);
/** 1 where the player collides with the state (non-empty collision shape). */
export const stateSolid = new Uint8Array(STATE_COUNT);
/** Block names by block id. */
export const blockNames: string[] = new Array<string>(BLOCK_COUNT).fill('');
/**
 * Block light each state gives off (minecraft-data `emitLight`: lava and fire 15, a torch 14, …); a block with a
 * `lit` property (redstone ore, a furnace) only in its lit states, as in the game.
 */
export const stateLightEmit = new Uint8Array(STATE_COUNT);
/**
 * How much light a state takes from light passing into it (minecraft-data `filterLight`, the game's light_block:
 * stone 15 stops it, water 2, air 0); light loses max(1, this) a step (LayerLightEngine.getComputedLevel).
 */
export const stateLightFilter = new Uint8Array(STATE_COUNT);

const AIRS = new Set(['air', 'cave_air', 'void_air']);
for (const b of blocks) {
  blockNames[b.id] = b.name;
  const min = b.minStateId ?? b.id;
  const max = b.maxStateId ?? b.id;
  for (let s = min; s <= max; s++) {
    stateToBlock[s] = b.id;
    const visible = !AIRS.has(b.name);
    stateVisible[s] = visible ? 1 : 0;
    stateOccludes[s] = visible && (b.boundingBox === 'block' || b.name === 'lava') ? 1 : 0;
    stateSolid[s] = b.boundingBox === 'block' ? 1 : 0;
    stateLightFilter[s] = b.filterLight ?? (b.boundingBox === 'block' && !b.transparent ? 15 : 0);
    stateLightEmit[s] = b.emitLight > 0 && isLit(b, s - min) ? b.emitLight : 0;
  }
}

/** Whether state `index` (from the block's first state) is lit: no `lit` property, or `lit` true (bools list true first). */
function isLit(b: (typeof blocks)[number], index: number): boolean {
  const props = b.states ?? [];
  const at = props.findIndex((p) => p.name === 'lit');
  if (at < 0) return true;
  const stride = props.slice(at + 1).reduce((n, p) => n * (p.num_values ?? 1), 1);
  return Math.floor(index / stride) % (props[at]!.num_values ?? 2) === 0;
}

function state(name: string): number {
  const b = mcData.blocksByName[name];
  if (!b) throw new Error(`minecraft-data ${DEFAULT_GAME_VERSION} has no block ${name}`);
  return b.defaultState ?? b.id;
}

/** Default state ids of the blocks the world generator and the rules use. */
export const S = {
  air: state('air'),
  cave_air: state('cave_air'),
  stone: state('stone'),
  granite: state('granite'),
  diorite: state('diorite'),
  andesite: state('andesite'),
  dirt: state('dirt'),
  gravel: state('gravel'),
  grass_block: state('grass_block'),
  grass: state('grass'),
  dandelion: state('dandelion'),
  poppy: state('poppy'),
  orange_tulip: state('orange_tulip'),
  red_tulip: state('red_tulip'),
  pink_tulip: state('pink_tulip'),
  white_tulip: state('white_tulip'),
  tall_grass_lower: mcData.blocksByName.tall_grass!.minStateId! + 1, // half=lower (values: upper, lower)
  tall_grass_upper: mcData.blocksByName.tall_grass!.minStateId!,
  bee_nest: mcData.blocksByName.bee_nest!.minStateId! + 6, // facing=south (north, south, …) × honey_level 0..5, honey 0
  obsidian: state('obsidian'),
  azure_bluet: state('azure_bluet'),
  oxeye_daisy: state('oxeye_daisy'),
  cornflower: state('cornflower'),
  bedrock: state('bedrock'),
  water: state('water'),
  lava: state('lava'),
  oak_log: state('oak_log'),
  oak_leaves: mcData.blocksByName.oak_leaves!.minStateId! + 1, // distance=1, persistent=false: a leaf next to a log
  birch_log: state('birch_log'),
  birch_leaves: mcData.blocksByName.birch_leaves!.minStateId! + 1,
  coal_ore: state('coal_ore'),
  iron_ore: state('iron_ore'),
  gold_ore: state('gold_ore'),
  redstone_ore: state('redstone_ore'),
  lapis_ore: state('lapis_ore'),
  diamond_ore: state('diamond_ore'),
  cobblestone: state('cobblestone'),
} as const;

const blockIdOf = (name: string) => mcData.blocksByName[name]!.id;
export const WATER_BLOCK = blockIdOf('water');
export const LAVA_BLOCK = blockIdOf('lava');
export const FIRE_BLOCKS = new Set([blockIdOf('fire'), blockIdOf('soul_fire')]);

/**
 * Observable names: block ids 0..BLOCK_COUNT-1 name blocks; BLOCK_COUNT + i names the i-th mob of the
 * schema. One index space lets the view code keep one typed array of nearest distances.
 */
export const MOB_NAMES: string[] = [...loadSchema().mobs].sort();
export const NAME_COUNT = BLOCK_COUNT + MOB_NAMES.length;
export const observableNames: string[] = [...blockNames, ...MOB_NAMES];
const nameIndexMap = new Map<string, number>();
observableNames.forEach((n, i) => {
  if (n && !nameIndexMap.has(n)) nameIndexMap.set(n, i);
});
/** Index of a block or mob name in the observable-name space, or -1. */
export function nameIndex(name: string): number {
  return nameIndexMap.get(name) ?? -1;
}
export function mobNameIndex(mob: string): number {
  const i = MOB_NAMES.indexOf(mob);
  if (i < 0) throw new Error(`${mob} is not a mob in minecraft-data ${DEFAULT_GAME_VERSION}`);
  return BLOCK_COUNT + i;
}

/**
 * Mob facts the simulator needs that minecraft-data 1.16.5 does not carry, from each mob's createAttributes
 * (decompiled 1.16.5): MAX_HEALTH and MOVEMENT_SPEED (horses and donkeys roll their health; see worldgen).
 */
export const MOB_MAX_HEALTH: Readonly<Record<string, number>> = { cow: 10, pig: 10, sheep: 8, chicken: 4, zombie: 20, skeleton: 20, spider: 16, creeper: 20 };
export const MOB_SPEED: Readonly<Record<string, number>> = {
  cow: 0.2,
  pig: 0.25,
  sheep: 0.23,
  chicken: 0.25,
  horse: 0.225,
  donkey: 0.175,
  zombie: 0.23,
  skeleton: 0.25,
  spider: 0.3,
  creeper: 0.25,
};
/** The mobs the plains generator spawns (BiomeDefaultFeatures.plainsSpawns' creatures). */
export const PLAINS_MOBS = ['cow', 'pig', 'sheep', 'chicken', 'horse', 'donkey'] as const;
export type PlainsMob = (typeof PLAINS_MOBS)[number];
