// The built-in tasks (the paper's) and the `// task: <id>` header a reward file names its task with: plain
// data and text, no game data and no file reading, so the VS Code client lists tasks without bundling the
// game (tasks/, which reads and checks user task files against the game's names, re-exports all of it).
export type WorldKind = 'plains' | 'underground';

/**
 * What the scripted teacher of `pretrain` may know. 'world': everything (block states anywhere, the mobs, the
 * exact pose), a planner that walks straight to the nearest target; the default. 'sight': only what the agent
 * itself sees (the view its `nearest` features come from), its pose and inventory, and the blocks within reach
 * of its body: an underground teacher that looks around once, tunnels below its start height, and goes for
 * target blocks once they are in view — never for ones it has not seen.
 */
export type TeacherKind = 'world' | 'sight';
export const TEACHER_KINDS: readonly TeacherKind[] = ['world', 'sight'];

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

/** What counts as success, by rule: each `kind` is one rule of tasks/success.ts (its parsing, targets, teacher and check). */
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
  /**
   * Where a training episode ends (a time-limit cut: PPO bootstraps it from the value of its last state and the
   * env goes on in a fresh world of its seed stream); absent: at `maxSteps`. A choice of the training setup, not
   * of the task: held-out evaluation always runs to `maxSteps`, and `train --train-episode-steps` overrides it.
   */
  trainEpisodeSteps?: number;
  /**
   * The foundation's DAgger rounds (`pretrain --dagger-rounds` overrides it); absent: none. Also a choice of the
   * training setup: a round lets the clone drive and the scripted teacher label the states it reaches.
   */
  daggerRounds?: number;
  /** What the scripted teacher may know (`pretrain`'s demonstrations); absent: 'world'. 'sight' is for
   * underground tasks whose success names blocks. */
  teacher?: TeacherKind;
  /** Attack tasks pass `damage_dealt` and `kill_entity` to the reward. */
  attack: boolean;
  description: TaskDescription;
  /** The task file it was read from (absolute), for a task that is not built in: run records keep it. */
  file?: string;
}

/**
 * The built-in tasks, each declared once: everything else (the simulator's and mineflayer's success and
 * termination, the scripted teacher, the probes, the analyzer, the LLM prompts, the editor's task picker and
 * header completion) takes what it needs from these entries and from the success rule their `kind` names
 * (tasks/success.ts). A task with an existing rule is one entry here and nothing else.
 */
const PLAINS_START = 'The agent stands on the ground in a plains biome with an empty inventory.';

const TASK_DEFINITIONS: readonly TaskSpec[] = [
  {
    id: 'explore-diamond',
    world: 'underground',
    startY: 11,
    inventory: { iron_pickaxe: 1 },
    success: { kind: 'near', names: ['diamond_ore'], distance: 2 },
    maxSteps: 60000,
    // A 256,000-frame run on 32 envs gives each env 8,000 steps: with 60,000-step episodes only ~10 episodes end
    // in a whole run and PPO learns from one stretch of one world per env. Shorter training episodes give every
    // env several fresh worlds, starts included (README, "Training: the paper's table").
    trainEpisodeSteps: 2000,
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
      initial_status: PLAINS_START,
      success_criteria: 'A log is in the field of view and less than 1 metre away.',
      procedure: 'Find a tree and walk up to its trunk.',
    },
  },
  {
    id: 'approach-cow',
    world: 'plains',
    startY: 'surface',
    inventory: {},
    success: { kind: 'near', names: ['cow'], distance: 2 },
    maxSteps: 2000,
    attack: false,
    description: {
      objective: 'Approach a cow.',
      initial_status: PLAINS_START,
      success_criteria: 'A cow is in the field of view and less than 2 metres away.',
      procedure: 'Find a cow and walk up to it.',
    },
  },
  {
    id: 'approach-pig',
    world: 'plains',
    startY: 'surface',
    inventory: {},
    success: { kind: 'near', names: ['pig'], distance: 2 },
    maxSteps: 2000,
    attack: false,
    description: {
      objective: 'Approach a pig.',
      initial_status: PLAINS_START,
      success_criteria: 'A pig is in the field of view and less than 2 metres away.',
      procedure: 'Find a pig and walk up to it.',
    },
  },
  {
    id: 'approach-sheep',
    world: 'plains',
    startY: 'surface',
    inventory: {},
    success: { kind: 'near', names: ['sheep'], distance: 2 },
    maxSteps: 2000,
    attack: false,
    description: {
      objective: 'Approach a sheep.',
      initial_status: PLAINS_START,
      success_criteria: 'A sheep is in the field of view and less than 2 metres away.',
      procedure: 'Find a sheep and walk up to it.',
    },
  },
  {
    id: 'approach-chicken',
    world: 'plains',
    startY: 'surface',
    inventory: {},
    success: { kind: 'near', names: ['chicken'], distance: 2 },
    maxSteps: 2000,
    attack: false,
    description: {
      objective: 'Approach a chicken.',
      initial_status: PLAINS_START,
      success_criteria: 'A chicken is in the field of view and less than 2 metres away.',
      procedure: 'Find a chicken and walk up to it.',
    },
  },
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
      initial_status: PLAINS_START,
      success_criteria: 'The agent has killed a cow.',
      procedure: 'Find a cow, get within reach and attack it until it dies.',
    },
  },
];

export const BUILTIN_TASKS: Readonly<Record<string, TaskSpec>> = Object.fromEntries(TASK_DEFINITIONS.map((t) => [t.id, t]));

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
