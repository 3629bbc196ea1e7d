// The success rules, registered by name: each says how a task file writes it, which names it is about (what
// prompts, probes, the analyzer and playback look for), whether its task passes the attack parameters, what
// the scripted teacher goes for, and how an environment decides success at the end of a step. The built-in
// tasks (task-list.ts) and task files pick a rule by its `kind`; a new rule is its criterion type in
// task-list.ts and its entry here, and every consumer takes what it needs through the functions below.
import { checkValue, type IntOption } from '../args';
import type { ObservationSchema } from '../schema';
import type { SuccessCriterion, TaskSpec } from '../task-list';

/** What an environment knows at the end of a step that a rule reads; the simulator and mineflayer fill it alike. */
export interface StepProgress {
  /** Kills this episode, by mob name. */
  readonly kills: ReadonlyMap<string, number>;
  /** Metres to the nearest visible block or mob of each name index (the env's view); Infinity when none is in view. */
  readonly dist: ArrayLike<number>;
}

/** What the scripted teacher goes for: the nearest of `names` (blocks, else mobs), and whether it strikes it. */
export interface TeacherGoal {
  names: readonly string[];
  strike: boolean;
}

/** Reports a task file's mistake at a path below `success` and stops. */
export type FailAt = (path: (string | number)[], message: string) => never;

interface SuccessRule<C extends SuccessCriterion> {
  /** How a task file writes it, for errors: `{kind: near, names, distance}`. */
  shape: string;
  /** A task file's `success` object, checked against the game's names. */
  parse(raw: Record<string, unknown>, schema: ObservationSchema, fail: FailAt): C;
  /** The names the criterion is about. */
  targets(c: C): string[];
  /** Whether the task passes `damage_dealt` and `kill_entity` unless its file says otherwise. */
  attack: boolean;
  teacher(c: C): TeacherGoal;
  /** The per-step check, with the criterion's names resolved to the env's name indices once. */
  check(c: C, nameIndex: (name: string) => number): (p: StepProgress) => boolean;
}

type Rules = { readonly [K in SuccessCriterion['kind']]: SuccessRule<Extract<SuccessCriterion, { kind: K }>> };

/** Kills a task may ask for: far above any episode's, below what a typo would give. */
const KILL_COUNT: IntOption = { type: 'int', min: 1, max: 10_000, description: 'kills' };

export const SUCCESS_RULES: Rules = {
  near: {
    shape: '{kind: near, names, distance}',
    parse(raw, schema, fail) {
      const names = raw.names;
      if (!Array.isArray(names) || names.length === 0) return fail(['success', 'names'], 'must be a non-empty list of block or mob names');
      names.forEach((n, i) => {
        if (typeof n !== 'string' || !schema.nearby.has(n)) fail(['success', 'names', i], `"${String(n)}" is not a visible block or mob name`);
      });
      const distance = raw.distance;
      if (typeof distance !== 'number' || !Number.isFinite(distance) || distance <= 0 || distance > 64)
        return fail(['success', 'distance'], `must be a distance in metres, above 0 and at most 64, got ${JSON.stringify(distance)}`);
      return { kind: 'near', names: names as string[], distance };
    },
    targets: (c) => c.names,
    attack: false,
    teacher: (c) => ({ names: c.names, strike: false }),
    check(c, nameIndex) {
      const indices = c.names.map(nameIndex);
      return ({ dist }) => {
        for (const i of indices) if (dist[i]! < c.distance) return true;
        return false;
      };
    },
  },
  kill: {
    shape: '{kind: kill, mob, count}',
    parse(raw, schema, fail) {
      const mob = raw.mob;
      if (typeof mob !== 'string' || !schema.mobs.has(mob)) return fail(['success', 'mob'], `"${String(mob)}" is not a mob name`);
      const count = raw.count ?? 1;
      const why = checkValue(KILL_COUNT, count);
      if (why) fail(['success', 'count'], why);
      return { kind: 'kill', mob, count: count as number };
    },
    targets: (c) => [c.mob],
    attack: true,
    teacher: (c) => ({ names: [c.mob], strike: true }),
    check:
      (c) =>
      ({ kills }) =>
        (kills.get(c.mob) ?? 0) >= c.count,
  },
};

const ruleOf = <C extends SuccessCriterion>(c: C) => SUCCESS_RULES[c.kind] as unknown as SuccessRule<C>;

/** The names a task's success is about: what a reward for it should look for. */
export const successTargets = (task: Pick<TaskSpec, 'success'>): string[] => ruleOf(task.success).targets(task.success);

/** Whether a task whose file does not say passes the attack parameters. */
export const attacksByDefault = (c: SuccessCriterion): boolean => ruleOf(c).attack;

/** What the scripted teacher goes for in this task. */
export const teacherGoal = (task: Pick<TaskSpec, 'success'>): TeacherGoal => ruleOf(task.success).teacher(task.success);

/** The task's success check for an env whose view indexes names with `nameIndex`. */
export const successCheck = (task: Pick<TaskSpec, 'success'>, nameIndex: (name: string) => number): ((p: StepProgress) => boolean) =>
  ruleOf(task.success).check(task.success, nameIndex);

/** A task file's `success` object as a criterion of a registered rule, or a located error. */
export function parseSuccess(raw: unknown, schema: ObservationSchema, fail: FailAt): SuccessCriterion {
  const rules = Object.entries(SUCCESS_RULES);
  if (!raw || typeof raw !== 'object') return fail(['success'], `must be ${rules.map(([, r]) => r.shape).join(' or ')}`);
  const kind = (raw as Record<string, unknown>).kind;
  const rule =
    typeof kind === 'string' && Object.hasOwn(SUCCESS_RULES, kind) ? (SUCCESS_RULES as Record<string, SuccessRule<SuccessCriterion>>)[kind] : undefined;
  if (!rule) return fail(['success', 'kind'], `must be ${rules.map(([k]) => `"${k}"`).join(' or ')}`);
  return rule.parse(raw as Record<string, unknown>, schema, fail);
}
