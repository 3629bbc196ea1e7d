// Tasks: a built-in id or a user task file (JSON or YAML), resolved and checked against the game's names. A
// task says where the agent starts, what counts as success, and how it is described to the LLM roles. The
// built-in list and the `// task: <id>` header are task-list.ts's (data only, which the editor client bundles);
// this module re-exports them and the success rules (success.ts), so the runner imports tasks from here.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { checkValue, didYouMean, readSettingsFile, SettingsFileError, UsageError, type IntOption } from '../args';
import { loadSchema } from '../schema';
import { attacksByDefault, parseSuccess } from './success';
import {
  BUILTIN_TASKS,
  TEACHER_KINDS,
  VANILLA_WORLD,
  type TaskDescription,
  type TaskSpec,
  type TeacherKind,
  type WorldKind,
  type WorldOptions,
} from '../task-list';

export {
  BUILTIN_TASKS,
  taskFromHeader,
  VANILLA_WORLD,
  withTaskHeader,
  type SuccessCriterion,
  type TaskDescription,
  type TaskSpec,
  type TeacherKind,
  TEACHER_KINDS,
  type WorldKind,
  type WorldOptions,
} from '../task-list';
export { successCheck, successTargets, teacherGoal, SUCCESS_RULES, type StepProgress, type TeacherGoal } from './success';

const WORLD_OPTION_MAX = 100;

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
  trainEpisodeSteps: { type: 'int', min: 1, max: 1_000_000, description: 'training episode limit' },
  daggerRounds: { type: 'int', min: 0, max: 20, description: 'DAgger rounds' },
  // Feet height in a 1.16.5 world: y 0..255 (World.isOutOfHeightLimit: y < 0 || y >= 256), standing on y ≥ 1.
  startY: { type: 'int', min: 1, max: 255, description: 'start height' },
  // The player's main inventory: 36 slots (PlayerInventory.main = DefaultedList.ofSize(36)) of at most 64
  // (Item.Settings.maxCount default 64).
  itemCount: { type: 'int', min: 1, max: 36 * 64, description: 'item count' },
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
  // A limit inherited from the built-in task holds only while it cuts the episodes short.
  const inherited = base?.trainEpisodeSteps !== undefined && base.trainEpisodeSteps < (maxSteps as number) ? base.trainEpisodeSteps : undefined;
  const trainEpisodeSteps = raw.trainEpisodeSteps ?? inherited;
  if (trainEpisodeSteps !== undefined) {
    check(['trainEpisodeSteps'], TASK_FIELDS.trainEpisodeSteps, trainEpisodeSteps);
    if ((trainEpisodeSteps as number) > (maxSteps as number))
      fail(['trainEpisodeSteps'], `must be ≤ maxSteps (${maxSteps as number}), got ${trainEpisodeSteps as number}`);
  }
  const daggerRounds = raw.daggerRounds ?? base?.daggerRounds;
  if (daggerRounds !== undefined) check(['daggerRounds'], TASK_FIELDS.daggerRounds, daggerRounds);
  const startY = raw.startY ?? base?.startY ?? 'surface';
  if (startY !== 'surface') check(['startY'], TASK_FIELDS.startY, startY);
  const inventory = (raw.inventory ?? base?.inventory ?? {}) as Record<string, unknown>;
  if (typeof inventory !== 'object' || inventory === null || Array.isArray(inventory)) fail(['inventory'], 'must map item names to counts');
  for (const [item, count] of Object.entries(inventory)) {
    if (!schema.items.has(item)) fail(['inventory', item], `"${item}" is not a Minecraft ${schema.gameVersion} item`);
    check(['inventory', item], TASK_FIELDS.itemCount, count);
  }
  if (raw.attack !== undefined) check(['attack'], { type: 'boolean', description: '' }, raw.attack);
  const criterion = parseSuccess(raw.success ?? base?.success, schema, fail);
  const teacher = raw.teacher ?? base?.teacher;
  if (teacher !== undefined) {
    if (!TEACHER_KINDS.includes(teacher as TeacherKind)) fail(['teacher'], `must be ${TEACHER_KINDS.map((k) => `"${k}"`).join(' or ')}`);
    // The sighted teacher tunnels underground towards blocks it sees.
    if (teacher === 'sight' && (world !== 'underground' || criterion.kind !== 'near' || criterion.names.every((n) => !schema.blocks.has(n))))
      fail(['teacher'], '"sight" needs an underground world and a success that names blocks');
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
    ...(trainEpisodeSteps !== undefined ? { trainEpisodeSteps: trainEpisodeSteps as number } : {}),
    ...(daggerRounds !== undefined ? { daggerRounds: daggerRounds as number } : {}),
    ...(teacher !== undefined ? { teacher: teacher as TeacherKind } : {}),
    ...(worldOptions ? { worldOptions } : {}),
    attack: (raw.attack as boolean | undefined) ?? base?.attack ?? attacksByDefault(criterion),
    description: d as unknown as TaskDescription,
    file: path.resolve(file),
  };
}

/** The task's world options with vanilla filled in. */
/**
 * The task as training plays it: episodes end at `limit` (a run's training-episode limit; undefined: the task's
 * own), never past `maxSteps`. Held-out evaluation plays `task` itself.
 */
export function withTrainingEpisodes(task: TaskSpec, limit: number | undefined): TaskSpec {
  return { ...task, maxSteps: Math.min(task.maxSteps, limit ?? task.maxSteps) };
}

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
