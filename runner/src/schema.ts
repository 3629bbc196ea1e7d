// The observation schema: the one place that states what a reward function receives, which names are
// valid where, and in which units and ranges. The linter, the sandboxed runtime, the environments and the
// LLM prompts all import this module; none of them restates these facts.
import minecraftData from 'minecraft-data';

export const DEFAULT_GAME_VERSION = '1.16.5';

/** Closed numeric interval with units, used for hover text, range lint and environment clamping. */
export interface Range {
  min: number;
  max: number;
  unit: string;
}

/** One element of a nearest-blocks entry `[distance, yaw, pitch]`. */
export const NEAREST_ENTRY: readonly { name: string; index: number; range: Range; doc: string }[] = [
  {
    name: 'distance',
    index: 0,
    range: { min: 0, max: 64, unit: 'm' },
    doc: 'Euclidean distance from the eyes to the nearest visible instance, in metres (1 block = 1 m).',
  },
  {
    name: 'yaw',
    index: 1,
    range: { min: -Math.PI, max: Math.PI, unit: 'rad' },
    doc: "Horizontal angle to it relative to the agent's facing, in radians; 0 = straight ahead, positive = to the right.",
  },
  {
    name: 'pitch',
    index: 2,
    range: { min: -Math.PI / 2, max: Math.PI / 2, unit: 'rad' },
    doc: "Vertical angle to it relative to the agent's facing, in radians; 0 = straight ahead, positive = below the line of sight.",
  },
];

/** One element of a `past_agent_positions` entry `[x, y, z, yaw, pitch]`. */
export const POSITION_ENTRY: readonly { name: string; index: number; range: Range; doc: string }[] = [
  { name: 'x', index: 0, range: { min: -30_000_000, max: 30_000_000, unit: 'm' }, doc: 'World x coordinate of the feet, metres.' },
  { name: 'y', index: 1, range: { min: 0, max: 256, unit: 'm' }, doc: 'World y coordinate (height) of the feet, metres; ground level is about 63.' },
  { name: 'z', index: 2, range: { min: -30_000_000, max: 30_000_000, unit: 'm' }, doc: 'World z coordinate of the feet, metres.' },
  { name: 'yaw', index: 3, range: { min: -180, max: 180, unit: '°' }, doc: 'Facing yaw in degrees relative to the initial facing.' },
  { name: 'pitch', index: 4, range: { min: -90, max: 90, unit: '°' }, doc: 'Facing pitch in degrees relative to the initial facing; positive looks down.' },
];

/**
 * Entries `past_agent_positions` holds on an episode's first reward call: the reward runtime seeds the history
 * with the start position when the episode begins and appends the position after each step, so the first call
 * sees the start and the current position. Index `length - 3` (or `[2]`) is the first that is undefined there.
 */
export const FIRST_CALL_HISTORY = 2;

/** `{name: [distance m, yaw rad, pitch rad]}` for each visible block type and mob: the reward's NearestBlocks. */
export type NearestBlocks = Record<string, [number, number, number]>;
/** `[x, y, z, yaw°, pitch°]`, yaw and pitch relative to the initial facing (schema POSITION_ENTRY). */
export type AgentPosition = [number, number, number, number, number];

/**
 * What one step gives the reward runtime for one environment. The runtime itself keeps
 * `previous_nearest_blocks`, `past_agent_positions` and `GLOBAL_DATA` per episode, so only this step's
 * values cross the sandbox boundary (history would make each step O(episode length)).
 */
export interface StepObservation {
  nearest: NearestBlocks;
  inventory_change: Record<string, number>;
  health: number;
  position: AgentPosition;
  damage_dealt: number;
  kill_entity: Record<string, number>;
}

/**
 * How a field's value is made of numbers, which is how it crosses the reward sandbox's boundary (the encoder in
 * reward/index.ts and both hosts' decoders are generated from it): a number (`integer`: a whole one, which a
 * Python reward receives as an int); `vector`: an array of that many numbers; `dict`: names (of blocks, items,
 * mobs) to such values. The type follows the field's type in StepObservation.
 */
type FieldShape<T> = T extends number
  ? { readonly dict?: false; readonly vector?: undefined; readonly integer?: boolean }
  : T extends readonly number[]
    ? { readonly dict?: false; readonly vector: number; readonly integer?: boolean }
    : T extends Readonly<Record<string, infer V>>
      ? { readonly dict: true } & Omit<FieldShape<V>, 'dict'>
      : never;

/**
 * Every field of a StepObservation, in the order it crosses the sandbox's boundary: the one description of the
 * observation. The reward runtime's encoder and the sandboxes' decoders follow each field's shape, the episode
 * recorder keeps each of them for every recorded step, and the analyzer's replay hands each back to the reward
 * (`stepObservationOf`); which parameter receives it is its PARAMETERS entry's `source`. `unobserved` is a
 * field's value where nothing of it happened (no damage dealt, no kill; always so outside attack tasks): a
 * recorded step that lacks the field, written before it was kept, reads as that. A field added to
 * StepObservation must be added here (the type says so).
 */
export const STEP_OBSERVATION_FIELDS = {
  nearest: { dict: true, vector: NEAREST_ENTRY.length },
  inventory_change: { dict: true, integer: true },
  health: {},
  position: { vector: POSITION_ENTRY.length },
  damage_dealt: { unobserved: 0 },
  kill_entity: { dict: true, integer: true, unobserved: {} },
} as const satisfies {
  readonly [K in keyof StepObservation]: FieldShape<StepObservation[K]> & { readonly unobserved?: StepObservation[K] };
};

type Fields = typeof STEP_OBSERVATION_FIELDS;
/** The fields a recorded step may lack: those with an `unobserved` value. */
type LaterRecordedField = { [K in keyof Fields]: Fields[K] extends { unobserved: unknown } ? K : never }[keyof Fields];
/** A StepObservation as an episode record holds it (records written before a field was kept lack it). */
export type RecordedObservation = Omit<StepObservation, LaterRecordedField> & Partial<Pick<StepObservation, LaterRecordedField>>;

/** The observation fields of a recorded step, each of them (a field the record lacks reads as unobserved). */
export function stepObservationOf(recorded: RecordedObservation): StepObservation {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(STEP_OBSERVATION_FIELDS) as [keyof StepObservation, { unobserved?: unknown }][]) {
    const value = recorded[name];
    out[name] = value !== undefined ? value : structuredClone(field.unobserved);
  }
  return out as unknown as StepObservation;
}

export type DeathCause = 'lava' | 'fire' | 'fall' | 'drowning' | 'mob' | 'other';

export type ParameterName =
  | 'current_nearest_blocks'
  | 'previous_nearest_blocks'
  | 'inventory_change'
  | 'health'
  | 'past_agent_positions'
  | 'GLOBAL_DATA'
  | 'damage_dealt'
  | 'kill_entity';

/**
 * Where the runtime takes a parameter's value from: a field of this step's observation, or what it keeps per
 * episode (`previous`: the previous step's `nearest`; `history`: every `position` of the episode so far, the start
 * first; `memory`: GLOBAL_DATA, the reward's own).
 */
export type ParameterSource = { field: keyof StepObservation } | { episode: 'previous' | 'history' | 'memory' };

export interface ParameterSpec {
  name: ParameterName;
  source: ParameterSource;
  /** TypeScript type used in the generated declaration. */
  tsType: string;
  /** Which name set its keys come from, for dict-typed parameters. */
  keys?: 'nearby' | 'item' | 'mob';
  /** Range of a scalar parameter or of a dict's values. */
  range?: Range;
  /** Only attack tasks pass it. */
  attackOnly?: boolean;
  doc: string;
}

/** The reward function's parameters, in the paper's order. Attack tasks append the attackOnly ones. */
export const PARAMETERS: readonly ParameterSpec[] = [
  {
    name: 'current_nearest_blocks',
    source: { field: 'nearest' },
    tsType: 'NearestBlocks',
    keys: 'nearby',
    doc: 'For each block type and mob visible in the field of view this step: `[distance m, yaw rad, pitch rad]` of the nearest one. A name is absent when nothing of it is visible.',
  },
  {
    name: 'previous_nearest_blocks',
    source: { episode: 'previous' },
    tsType: 'NearestBlocks',
    keys: 'nearby',
    doc: 'The same as `current_nearest_blocks`, for the previous step (on the first step of an episode: the observation the episode started with).',
  },
  {
    name: 'inventory_change',
    source: { field: 'inventory_change' },
    tsType: 'InventoryChange',
    keys: 'item',
    doc: 'For each item whose count changed since the previous step: the change (positive = gained). Unchanged items are absent.',
  },
  {
    name: 'health',
    source: { field: 'health' },
    tsType: 'number',
    range: { min: 0, max: 10, unit: 'hearts' },
    doc: 'Health now, 0 (dead) to 10 (full).',
  },
  {
    name: 'past_agent_positions',
    source: { episode: 'history' },
    tsType: 'AgentPosition[]',
    doc: 'One `[x, y, z, yaw°, pitch°]` entry per step so far, oldest first: the start position, then one per step; the last entry is the current position (the first call of an episode sees 2 entries). Yaw and pitch are degrees relative to the initial facing.',
  },
  {
    name: 'GLOBAL_DATA',
    source: { episode: 'memory' },
    tsType: 'GlobalData',
    doc: 'Memory kept across the steps of one episode; an empty object at episode start. Any JavaScript value may be stored. Read a key only after a write or behind a guard (`in`, `??`).',
  },
  {
    name: 'damage_dealt',
    source: { field: 'damage_dealt' },
    tsType: 'number',
    range: { min: 0, max: 1000, unit: 'hp' },
    attackOnly: true,
    doc: 'Damage the agent dealt to mobs this step, in health points (≥ 0). Attack tasks only.',
  },
  {
    name: 'kill_entity',
    source: { field: 'kill_entity' },
    tsType: 'KillEntity',
    keys: 'mob',
    attackOnly: true,
    doc: 'For each mob type the agent killed this step: how many. Attack tasks only.',
  },
];

export function parameterNames(attack: boolean): ParameterName[] {
  return PARAMETERS.filter((p) => attack || !p.attackOnly).map((p) => p.name);
}

/** A field of the observation as the sandbox's hosts decode it: a number, or `vector` numbers (0: one), or a dict of either. */
export interface WireField {
  name: keyof StepObservation;
  dict: boolean;
  vector: number;
  integer: boolean;
}

/**
 * The observation as the reward sandbox receives it, sent to its host when it opens: its fields in the order they
 * cross the boundary, and the reward's parameters in call order with where each comes from. The encoder, the hosts'
 * decoders and the argument lists are generated from it, so a field added here reaches the reward unchanged.
 */
export interface ObservationWire {
  fields: WireField[];
  parameters: { name: ParameterName; source: ParameterSource; attackOnly: boolean }[];
}

export function observationWire(): ObservationWire {
  const fields = Object.entries(STEP_OBSERVATION_FIELDS as Record<string, { dict?: boolean; vector?: number; integer?: boolean }>).map(([name, f]) => ({
    name: name as keyof StepObservation,
    dict: f.dict ?? false,
    vector: f.vector ?? 0,
    integer: f.integer ?? false,
  }));
  return { fields, parameters: PARAMETERS.map((p) => ({ name: p.name, source: p.source, attackOnly: p.attackOnly ?? false })) };
}

/**
 * The scale rule from the paper: only the signs of `dense` and `sparse` count, and
 * reward = sign(sparse) * 1 + sign(dense) * 0.1, one of ±1.1, ±1, ±0.9, ±0.1, 0.
 */
export const SCALE_RULE = {
  sparseWeight: 1,
  denseWeight: 0.1,
  expression: 'Math.sign(sparse) * 1 + Math.sign(dense) * 0.1',
  allowedValues: [-1.1, -1, -0.9, -0.1, 0, 0.1, 0.9, 1, 1.1],
} as const;

export function combineScaled(dense: number, sparse: number): number {
  return Math.sign(sparse) * SCALE_RULE.sparseWeight + Math.sign(dense) * SCALE_RULE.denseWeight;
}

/** A combined reward split back into its two weighted terms (`combineScaled`'s inverse: each term is −w, 0 or w). */
export function splitScaled(reward: number): { sparse: number; dense: number } {
  const s = Math.round(reward / SCALE_RULE.sparseWeight);
  const d = Math.round((reward - s * SCALE_RULE.sparseWeight) / SCALE_RULE.denseWeight);
  return { sparse: s * SCALE_RULE.sparseWeight, dense: d * SCALE_RULE.denseWeight };
}

/** Facts about the game the agent lives in, as given to the designer and used by the environments. */
export const GAME_FACTS = {
  fovYawDeg: 35, // visible if |relative yaw| <= 35°
  fovPitchDeg: 30, // visible if |relative pitch| <= 30°
  viewDistance: 64,
  groundLevel: 63,
  turnDeg: 15,
  walkPerStep: 0.2,
  maxHealth: 10,
  actions: [
    'no_op',
    'turn_up',
    'turn_down',
    'turn_left',
    'turn_right',
    'forward',
    'forward_jump',
    'jump',
    'back',
    'move_left',
    'move_right',
    'attack',
    'equip',
    'jump_place',
  ] as const,
} as const;

export type ActionName = (typeof GAME_FACTS.actions)[number];

export function gameFactsText(): string {
  const g = GAME_FACTS;
  return [
    `- Field of view: yaw -${g.fovYawDeg}°..${g.fovYawDeg}°, pitch -${g.fovPitchDeg}°..${g.fovPitchDeg}°; blocks and mobs are visible up to ${g.viewDistance} m unless occluded.`,
    `- 1 block = 1 m; ground level is about y = ${g.groundLevel}.`,
    `- The agent moves about ${g.walkPerStep} m per step and turns ${g.turnDeg}° per turn action.`,
    '- Breaking a block takes many consecutive attack steps on the same block; hunger is held at maximum.',
    `- Actions (${g.actions.length}, discrete): ${g.actions.join(', ')}.`,
  ].join('\n');
}

// Living entities that minecraft-data 1.16.5 files under UNKNOWN but are mobs in the game.
const UNCATEGORISED_MOBS = ['bee', 'fox', 'hoglin', 'piglin', 'piglin_brute', 'strider', 'zoglin', 'zombified_piglin'];
// Blocks that are never seen: the nearest-blocks dict never contains them.
const INVISIBLE_BLOCKS = new Set(['air', 'cave_air', 'void_air']);

/**
 * Semantic neighbours that edit distance cannot find: names LLMs and people write for a real thing.
 * Each maps to the real names to suggest, best first. Kept here so linter and prompts agree.
 */
export const NAME_ALIASES: Readonly<Record<string, readonly string[]>> = {
  magma: ['lava', 'magma_block'],
  wood: ['oak_log', 'oak_planks'],
  log: ['oak_log', 'birch_log', 'spruce_log'],
  logs: ['oak_log', 'birch_log', 'spruce_log'],
  tree: ['oak_log', 'oak_leaves'],
  wood_log: ['oak_log'],
  leaves: ['oak_leaves'],
  diamond: ['diamond_ore', 'diamond'],
  diamonds: ['diamond', 'diamond_ore'],
  iron: ['iron_ore', 'iron_ingot'],
  gold: ['gold_ore', 'gold_ingot'],
  coal: ['coal_ore', 'coal'],
  redstone: ['redstone_ore', 'redstone'],
  lapis: ['lapis_ore', 'lapis_lazuli'],
  grass: ['grass_block', 'grass'],
  dirt_block: ['dirt'],
  cobble: ['cobblestone'],
  cobblestone_pickaxe: ['stone_pickaxe'],
  wooden_log: ['oak_log'],
  plank: ['oak_planks'],
  planks: ['oak_planks'],
  beef: ['beef', 'cooked_beef'],
  meat: ['beef', 'porkchop', 'chicken', 'mutton'],
  pork: ['porkchop'],
  wool: ['white_wool'],
  flowing_lava: ['lava'],
  flowing_water: ['water'],
  still_water: ['water'],
  stone_block: ['stone'],
  mob: ['cow', 'pig', 'sheep', 'chicken', 'zombie'],
  zombie_pigman: ['zombified_piglin'],
  cattle: ['cow'],
  hen: ['chicken'],
  lamb: ['sheep'],
};

export type NameKind = 'block' | 'item' | 'mob';

export interface ObservationSchema {
  gameVersion: string;
  /** Visible block names: minecraft-data block names minus the airs. */
  blocks: ReadonlySet<string>;
  /** Item names (valid in `inventory_change`). */
  items: ReadonlySet<string>;
  /** Mob names (valid in the nearest-blocks dicts and in `kill_entity`). */
  mobs: ReadonlySet<string>;
  /** Keys of `current_nearest_blocks` / `previous_nearest_blocks`: blocks plus mobs. */
  nearby: ReadonlySet<string>;
  /** Display names for hover text. */
  displayName(name: string): string | undefined;
  /** Which kinds a real name is (a name can be both a block and an item, e.g. oak_log). */
  kindsOf(name: string): NameKind[];
  /** Names valid for a parameter's keys. */
  namesFor(keys: 'nearby' | 'item' | 'mob'): ReadonlySet<string>;
  /**
   * The items a block drops when mined without silk touch (the agent never has it), from minecraft-data's
   * block loot tables: diamond_ore → diamond, stone → cobblestone. Undefined for a name with no loot table.
   */
  blockDrops(name: string): readonly string[] | undefined;
}

const schemaCache = new Map<string, ObservationSchema>();

export function loadSchema(gameVersion: string = DEFAULT_GAME_VERSION): ObservationSchema {
  const cached = schemaCache.get(gameVersion);
  if (cached) return cached;
  const data = minecraftData(gameVersion);
  if (!data) throw new Error(`minecraft-data has no data for game version ${gameVersion}`);
  const blocks = new Set(data.blocksArray.map((b) => b.name).filter((n) => !INVISIBLE_BLOCKS.has(n)));
  const items = new Set(data.itemsArray.map((i) => i.name));
  items.delete('air');
  const mobs = new Set(data.entitiesArray.filter((e) => /mobs$/i.test(e.category ?? '') || UNCATEGORISED_MOBS.includes(e.name)).map((e) => e.name));
  const nearby = new Set([...blocks, ...mobs]);
  const display = new Map<string, string>();
  for (const e of data.entitiesArray) display.set(e.name, e.displayName);
  for (const i of data.itemsArray) display.set(i.name, i.displayName);
  for (const b of data.blocksArray) display.set(b.name, b.displayName);
  const schema: ObservationSchema = {
    gameVersion,
    blocks,
    items,
    mobs,
    nearby,
    displayName: (name) => display.get(name),
    kindsOf: (name) => {
      const kinds: NameKind[] = [];
      if (blocks.has(name)) kinds.push('block');
      if (items.has(name)) kinds.push('item');
      if (mobs.has(name)) kinds.push('mob');
      return kinds;
    },
    namesFor: (keys) => (keys === 'nearby' ? nearby : keys === 'item' ? items : mobs),
    blockDrops: (name) => {
      const loot = data.blockLoot?.[name];
      return loot && [...new Set(loot.drops.filter((d) => !d.silkTouch).map((d) => d.item))];
    },
  };
  schemaCache.set(gameVersion, schema);
  return schema;
}

/** Damerau-free Levenshtein distance, small strings only. */
export function editDistance(a: string, b: string): number {
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/**
 * Did-you-mean for a name that is not valid where it is used: semantic neighbours first (magma → lava),
 * then real names of the right kind that contain the word or are a small edit away.
 */
export function suggestNames(name: string, valid: ReadonlySet<string>, limit = 3): string[] {
  const key = name
    .toLowerCase()
    .replace(/^minecraft:/, '')
    .replace(/[\s-]+/g, '_');
  const out: string[] = [];
  const add = (n: string) => {
    if (valid.has(n) && !out.includes(n) && n !== name) out.push(n);
  };
  if (key !== name) add(key);
  for (const alias of NAME_ALIASES[key] ?? NAME_ALIASES[key.replace(/s$/, '')] ?? []) add(alias);
  // Names of the right kind built on the word: diamond → diamond_ore, oak → oak_log.
  const related = [...valid].filter((n) => n.split('_').includes(key) || key.split('_').every((w) => n.includes(w)));
  related.sort((a, b) => a.length - b.length || a.localeCompare(b));
  for (const n of related.slice(0, limit)) add(n);
  const threshold = key.length <= 4 ? 1 : Math.max(2, Math.floor(key.length / 4));
  const close = [...valid]
    .map((n) => [n, editDistance(key, n)] as const)
    .filter(([, d]) => d <= threshold)
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]));
  for (const [n] of close) add(n);
  return out.slice(0, limit);
}

/**
 * The TypeScript declarations a reward file is checked against, generated from the schema so that
 * reward files get precise types without annotations. Name unions make `current_nearest_blocks.magma`
 * a type error as well as a lint error.
 */
export function rewardDeclarations(schema: ObservationSchema = loadSchema()): string {
  const union = (names: ReadonlySet<string>) =>
    [...names]
      .sort()
      .map((n) => JSON.stringify(n))
      .join(' | ');
  const lines = [
    `// Generated from the Rewardsmith observation schema (Minecraft ${schema.gameVersion}). Do not edit.`,
    `type NearbyName = ${union(schema.nearby)};`,
    `type ItemName = ${union(schema.items)};`,
    `type MobName = ${union(schema.mobs)};`,
    '/** [distance m (0..64), yaw rad (-π..π, 0 = ahead), pitch rad (-π/2..π/2)] */',
    'type NearestEntry = [distance: number, yaw: number, pitch: number];',
    'type NearestBlocks = { [K in NearbyName]?: NearestEntry };',
    'type InventoryChange = { [K in ItemName]?: number };',
    'type KillEntity = { [K in MobName]?: number };',
    '/** [x m, y m, z m, yaw ° relative to initial facing, pitch °] */',
    'type AgentPosition = [x: number, y: number, z: number, yaw: number, pitch: number];',
    'type GlobalData = Record<string, any>;',
  ];
  for (const p of PARAMETERS) lines.push(`/** ${p.doc} */`, `declare const __schema_${p.name}: ${p.tsType};`);
  return lines.join('\n') + '\n';
}
