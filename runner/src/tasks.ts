// Built-in tasks (the paper's) and user task files (JSON or YAML). A task says where the agent starts, what
// counts as success, and how it is described to the LLM roles. A reward file names its task in a
// `// task: <id>` header line.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { checkValue, didYouMean, readSettingsFile, SettingsFileError, UsageError, type IntOption } from './args';
import { loadSchema } from './schema';

export type WorldKind = 'plains' | 'underground';

/**
 * Density multipliers for an easier (or harder) world than vanilla 1.16.5; 1 everywhere is vanilla, the
 * default. A task file sets them under `worldOptions` for a quick demo; figures measured on such a world
 * are not comparable with vanilla ones.
 */
export interface WorldOptions {
  /** Trees per plains chunk, × vanilla's 0.05. */
  treeDensity: number;
  /** Passive-animal groups per plains chunk, × vanilla's. */
  animalDensity: number;
  /** Ore veins per chunk (every ore), × vanilla's attempts. */
  oreDensity: number;
  /** Hostile mobs around the agent underground, × vanilla's mob cap (0: none). */
  hostileDensity: number;
}
export const VANILLA_WORLD: Readonly<WorldOptions> = Object.freeze({ treeDensity: 1, animalDensity: 1, oreDensity: 1, hostileDensity: 1 });
const WORLD_OPTION_MAX = 100;

export type SuccessCriterion =
  /** One of `names` is visible and nearer than `distance` metres. */
  | { kind: 'near'; names: string[]; distance: number }
  /** The agent killed `count` of `mob`. */
  | { kind: 'kill'; mob: string; count: number };

export interface TaskDescription {
  objective: string;
  initial_status: string;
  success_criteria: string;
  procedure: string;
}

export interface TaskSpec {
  id: string;
  world: WorldKind;
  /** Density multipliers; absent means vanilla. */
  worldOptions?: Partial<WorldOptions>;
  /** Feet height at the start: 'surface' spawns on the ground; a number spawns at that y underground. */
  startY: 'surface' | number;
  /** Starting inventory, item name → count; the first entry is held. */
  inventory: Record<string, number>;
  success: SuccessCriterion;
  maxSteps: number;
  /** Attack tasks pass `damage_dealt` and `kill_entity` to the reward. */
  attack: boolean;
  description: TaskDescription;
  /** The task file it was read from (absolute), for a task that is not built in: run records keep it. */
  file?: string;
}

const approach = (mob: string): TaskSpec => ({
  id: `approach-${mob}`,
  world: 'plains',
  startY: 'surface',
  inventory: {},
  success: { kind: 'near', names: [mob], distance: 2 },
  maxSteps: 2000,
  attack: false,
  description: {
    objective: `Approach a ${mob}.`,
    initial_status: 'The agent stands on the ground in a plains biome with an empty inventory.',
    success_criteria: `A ${mob} is in the field of view and less than 2 metres away.`,
    procedure: `Find a ${mob} and walk up to it.`,
  },
});

export const BUILTIN_TASKS: Readonly<Record<string, TaskSpec>> = Object.fromEntries(
  [
    {
      id: 'explore-diamond',
      world: 'underground',
      startY: 11,
      inventory: { iron_pickaxe: 1 },
      success: { kind: 'near', names: ['diamond_ore'], distance: 2 },
      maxSteps: 60000,
      attack: false,
      description: {
        objective: 'Find diamond ore.',
        initial_status: 'The agent is underground at y = 11, holding an iron pickaxe.',
        success_criteria: 'Diamond ore is in the field of view and less than 2 metres away.',
        procedure: 'Explore the underground, digging through stone where needed, until diamond ore is close.',
      },
    },
    {
      id: 'approach-tree',
      world: 'plains',
      startY: 'surface',
      inventory: {},
      success: { kind: 'near', names: ['oak_log', 'birch_log'], distance: 1 },
      maxSteps: 2000,
      attack: false,
      description: {
        objective: 'Approach a tree.',
        initial_status: 'The agent stands on the ground in a plains biome with an empty inventory.',
        success_criteria: 'A log is in the field of view and less than 1 metre away.',
        procedure: 'Find a tree and walk up to its trunk.',
      },
    },
    approach('cow'),
    approach('pig'),
    approach('sheep'),
    approach('chicken'),
    {
      id: 'attack-cow',
      world: 'plains',
      startY: 'surface',
      inventory: {},
      success: { kind: 'kill', mob: 'cow', count: 1 },
      maxSteps: 4000,
      attack: true,
      description: {
        objective: 'Kill a cow.',
        initial_status: 'The agent stands on the ground in a plains biome with an empty inventory.',
        success_criteria: 'The agent has killed a cow.',
        procedure: 'Find a cow, get within reach and attack it until it dies.',
      },
    },
  ].map((t) => [t.id, t as TaskSpec]),
);

/** `// task: <id or task file>` in a reward file's leading comments (before the first line of code). */
/** `// task: <id>` in TypeScript, `# task: <id>` in Python. */
const TASK_HEADER = /^\s*(?:\/\/|#)\s*task\s*:\s*([A-Za-z0-9_./-]+)\s*$/;

/** 0-based line of the task header, or -1 when the leading comments have none. */
function taskHeaderLine(lines: string[]): number {
  for (let i = 0; i < lines.length; i++) {
    if (TASK_HEADER.test(lines[i]!)) return i;
    const trimmed = lines[i]!.trim();
    if (trimmed !== '' && !trimmed.startsWith('//') && !trimmed.startsWith('/*') && !trimmed.startsWith('*') && !trimmed.startsWith('#')) return -1;
  }
  return -1;
}

/** The task a reward file names in its `// task: <id>` header line, or undefined. */
export function taskFromHeader(text: string): string | undefined {
  const lines = text.split(/\r?\n/);
  const at = taskHeaderLine(lines);
  return at < 0 ? undefined : TASK_HEADER.exec(lines[at]!)![1];
}

/** The reward file with its header naming `taskId`: the existing header line rewritten, else one added on top. */
export function withTaskHeader(text: string, taskId: string, comment: '//' | '#' = '//'): string {
  const lines = text.split('\n');
  const at = taskHeaderLine(lines.map((l) => l.replace(/\r$/, '')));
  if (at < 0) return `${comment} task: ${taskId}\n${text}`;
  lines[at] = lines[at]!.replace(/((?:\/\/|#)\s*task\s*:\s*)[A-Za-z0-9_./-]+/, `$1${taskId}`);
  return lines.join('\n');
}

/** A task-file problem with its location (1-based line and column), for the CLI and the editor. */
export class TaskFileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | null,
    readonly column: number | null,
    message: string,
  ) {
    super(`${file}${line === null ? '' : `:${line}:${column}`}: ${message}`);
    this.name = 'TaskFileError';
  }
}

/**
 * Resolves a task id (built-in) or a path to a task file. A name that is neither a built-in task nor an
 * existing task file is a usage error (exit 2) with a did-you-mean; a task file with a mistake in it is a
 * located TaskFileError.
 */
export function resolveTask(idOrPath: string): TaskSpec {
  const builtin = BUILTIN_TASKS[idOrPath];
  if (builtin) return builtin;
  if (/\.(json|ya?ml)$/i.test(idOrPath)) {
    if (!existsSync(idOrPath)) throw new UsageError(`${idOrPath}: no such task file`);
    return loadTaskFile(idOrPath);
  }
  const [near] = didYouMean(idOrPath, Object.keys(BUILTIN_TASKS));
  throw new UsageError(
    `unknown task "${idOrPath}"${near ? ` (did you mean ${near}?)` : ''}; built-in tasks: ${Object.keys(BUILTIN_TASKS).join(', ')}, or a .json/.yaml task file`,
  );
}

export function taskDescriptionText(task: TaskSpec): string {
  const d = task.description;
  return [
    `Objective: ${d.objective}`,
    `Initial status: ${d.initial_status}`,
    `Success criteria: ${d.success_criteria}`,
    `Procedure: ${d.procedure}`,
    `Episode limit: ${task.maxSteps} steps.`,
  ].join('\n');
}

/** Bounds of a task file's numeric fields (checked with the same rules as command-line options). */
const TASK_FIELDS = {
  // An episode of the longest built-in task (explore-diamond) is 60,000 steps; 1,000,000 is ~14 hours of game time.
  maxSteps: { type: 'int', min: 1, max: 1_000_000, description: 'episode limit' },
  // Feet height in a 1.16.5 world: y 0..255 (World.isOutOfHeightLimit: y < 0 || y >= 256), standing on y ≥ 1.
  startY: { type: 'int', min: 1, max: 255, description: 'start height' },
  // The player's main inventory: 36 slots (PlayerInventory.main = DefaultedList.ofSize(36)) of at most 64
  // (Item.Settings.maxCount default 64).
  itemCount: { type: 'int', min: 1, max: 36 * 64, description: 'item count' },
  killCount: { type: 'int', min: 1, max: 10_000, description: 'kills' },
} satisfies Record<string, IntOption>;

/** Loads and validates a user task file. JSON is parsed as YAML (a superset) so both get positions. */
export function loadTaskFile(file: string): TaskSpec {
  let read: ReturnType<typeof readSettingsFile>;
  try {
    read = readSettingsFile(file, 'task file');
  } catch (err) {
    if (err instanceof SettingsFileError) throw new TaskFileError(file, err.at?.line ?? null, err.at?.col ?? null, err.reason);
    throw err;
  }
  const { doc, locate } = read;
  const fail = (path: (string | number)[], message: string): never => {
    const node = doc.getIn(path, true) as { range?: [number, number, number] } | undefined;
    const p = locate(node?.range?.[0]);
    throw new TaskFileError(file, p.line, p.col, `${path.join('.') || '(root)'}: ${message}`);
  };
  const raw = doc.toJS() as Record<string, unknown> | null;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return fail([], 'a task file must be an object');
  const schema = loadSchema();
  const str = (key: string): string => {
    const v = raw[key];
    if (typeof v !== 'string' || v.length === 0) return fail([key], 'must be a non-empty string');
    return v;
  };
  const id = str('id');
  const base = typeof raw.extends === 'string' ? BUILTIN_TASKS[raw.extends] : undefined;
  if (raw.extends !== undefined && !base) fail(['extends'], `unknown built-in task "${String(raw.extends)}"`);
  const world = raw.world ?? base?.world;
  if (world !== 'plains' && world !== 'underground') fail(['world'], 'must be "plains" or "underground"');
  const check = (path: (string | number)[], spec: Parameters<typeof checkValue>[0], value: unknown) => {
    const why = checkValue(spec, value);
    if (why) fail(path, why);
  };
  const maxSteps = raw.maxSteps ?? base?.maxSteps;
  check(['maxSteps'], TASK_FIELDS.maxSteps, maxSteps);
  const startY = raw.startY ?? base?.startY ?? 'surface';
  if (startY !== 'surface') check(['startY'], TASK_FIELDS.startY, startY);
  const inventory = (raw.inventory ?? base?.inventory ?? {}) as Record<string, unknown>;
  if (typeof inventory !== 'object' || inventory === null || Array.isArray(inventory)) fail(['inventory'], 'must map item names to counts');
  for (const [item, count] of Object.entries(inventory)) {
    if (!schema.items.has(item)) fail(['inventory', item], `"${item}" is not a Minecraft ${schema.gameVersion} item`);
    check(['inventory', item], TASK_FIELDS.itemCount, count);
  }
  if (raw.attack !== undefined) check(['attack'], { type: 'boolean', description: '' }, raw.attack);
  const success = (raw.success ?? base?.success) as Record<string, unknown> | undefined;
  if (!success || typeof success !== 'object') return fail(['success'], 'must be {kind: near, names, distance} or {kind: kill, mob, count}');
  let criterion: SuccessCriterion;
  if (success.kind === 'near') {
    const names = success.names;
    if (!Array.isArray(names) || names.length === 0) return fail(['success', 'names'], 'must be a non-empty list of block or mob names');
    names.forEach((n, i) => {
      if (typeof n !== 'string' || !schema.nearby.has(n)) fail(['success', 'names', i], `"${String(n)}" is not a visible block or mob name`);
    });
    const distance = success.distance;
    if (typeof distance !== 'number' || !Number.isFinite(distance) || distance <= 0 || distance > 64)
      return fail(['success', 'distance'], `must be a distance in metres, above 0 and at most 64, got ${JSON.stringify(distance)}`);
    criterion = { kind: 'near', names: names as string[], distance };
  } else if (success.kind === 'kill') {
    const mob = success.mob;
    if (typeof mob !== 'string' || !schema.mobs.has(mob)) return fail(['success', 'mob'], `"${String(mob)}" is not a mob name`);
    const count = success.count ?? 1;
    check(['success', 'count'], TASK_FIELDS.killCount, count);
    criterion = { kind: 'kill', mob, count: count as number };
  } else {
    return fail(['success', 'kind'], 'must be "near" or "kill"');
  }
  const worldOptions = raw.worldOptions === undefined ? base?.worldOptions : parseWorldOptions(raw.worldOptions, fail);
  const d = (raw.description ?? base?.description) as Record<string, unknown> | undefined;
  if (!d || typeof d !== 'object') return fail(['description'], 'must have objective, initial_status, success_criteria and procedure');
  for (const key of ['objective', 'initial_status', 'success_criteria', 'procedure']) {
    if (typeof d[key] !== 'string' || (d[key] as string).length === 0) fail(['description', key], 'must be a non-empty string');
  }
  return {
    id,
    world: world as WorldKind,
    startY: startY as TaskSpec['startY'],
    inventory: inventory as Record<string, number>,
    success: criterion,
    maxSteps: maxSteps as number,
    ...(worldOptions ? { worldOptions } : {}),
    attack: (raw.attack as boolean | undefined) ?? base?.attack ?? criterion.kind === 'kill',
    description: d as unknown as TaskDescription,
    file: path.resolve(file),
  };
}

/** The task's world options with vanilla filled in. */
export function worldOptionsOf(task: Pick<TaskSpec, 'worldOptions'>): WorldOptions {
  return { ...VANILLA_WORLD, ...task.worldOptions };
}

function parseWorldOptions(value: unknown, fail: (path: (string | number)[], message: string) => never): Partial<WorldOptions> {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return fail(['worldOptions'], `must map options (${Object.keys(VANILLA_WORLD).join(', ')}) to multipliers`);
  const out: Partial<WorldOptions> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (!(key in VANILLA_WORLD)) fail(['worldOptions', key], `unknown world option "${key}"; options: ${Object.keys(VANILLA_WORLD).join(', ')}`);
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > WORLD_OPTION_MAX)
      fail(['worldOptions', key], `must be a multiplier 0..${WORLD_OPTION_MAX} (1 = vanilla)`);
    out[key as keyof WorldOptions] = v as number;
  }
  return out;
}
