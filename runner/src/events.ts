// The runner's `--events ndjson` stream: one JSON object per line on stdout. Versioned and typed here, once;
// the extension imports these types, so a change on one side is a compile error on the other.
//
// Field names are the run files' own (ARCHITECTURE.md, "Names in files and events"): snake_case, and a field
// that is also in a file (summary.json, metrics.ndjson, results.json, suggestions.json) has the same name and
// shape there, so the dashboard reads a live event and a past run's records with the same code.
/** 2: field names as in the run files (snake_case; version 1 had camelCase). */
export const EVENTS_VERSION = 2;

/** A rate over episodes with its Wilson 95 % interval: records.ts `RateRecord`, the same shape on disk. */
export interface EventRate {
  count: number;
  n: number;
  rate: number | null;
  ci95: [number, number];
}

interface EventBase {
  v: typeof EVENTS_VERSION;
  /** Milliseconds since the Unix epoch. */
  t: number;
}

export interface StartedEvent extends EventBase {
  type: 'started';
  command: 'train' | 'eval' | 'loop' | 'rollout' | 'sweep';
  task: string;
  reward_file: string | null;
  run_dir: string;
  backend: string;
  env: 'sim' | 'mineflayer';
  total_frames: number;
  num_envs: number;
  resumed_from_frames: number;
}

/**
 * One PPO update: a line of `DIR/metrics.ndjson` (records.ts reads it) and, with `total_frames`, a `progress`
 * event. Declared once, here, for both. Fields added since the first runs are optional: older run folders lack them.
 */
export interface UpdateMetrics {
  update: number;
  frames: number;
  fps: number;
  /** Mean return of the last ≤ 100 finished episodes (0 before any has finished). */
  mean_return: number;
  /**
   * Training success over the episodes that started in a recent window and have all ended (each counted when
   * it ends; summary.json train.success); null until such a window exists. Not "the last N finished".
   */
  success_rate: number | null;
  /** The same rate with the episodes behind it, its Wilson 95 % interval and its window of started episodes. */
  success: EventRate & { started_from_frame: number; started_to_frame: number; mean_return: number | null };
  /** Episodes finished since the run started. */
  episodes: number;
  /** Episodes that finished during this update's rollout, and their mean return (null when none did). */
  finished_episodes?: number;
  finished_return?: number | null;
  /** Mean return so far of the episodes still running when the update's rollout ended (a partial return). */
  unfinished_return?: number;
  policy_loss: number;
  value_loss: number;
  entropy: number;
  /** KL to the --init policy when there is one, else the approximate KL between old and new policy. */
  kl: number;
  /** Approximate KL between the policy that collected the data and the updated one: mean(log π_old − log π) over its minibatches. */
  approx_kl?: number;
  /** Share of samples whose probability ratio was clipped. */
  clip_fraction?: number;
  /** 1 − Var(returns − values) / Var(returns) of the rollout before the update; null when returns were constant. */
  explained_variance?: number | null;
  learning_rate?: number;
  wall_seconds: number;
}

export interface ProgressEvent extends EventBase, UpdateMetrics {
  type: 'progress';
  /** The frames the run will train in all. */
  total_frames: number;
}

export interface EvalEvent extends EventBase {
  type: 'eval';
  /** summary.json's `eval` fields. */
  episodes: number;
  success_rate: number;
  death_rate: number;
  /** success_rate and death_rate with their counts and Wilson 95 % intervals over `episodes`. */
  success: EventRate;
  death: EventRate;
  avg_steps: number;
  avg_distance_moved: number;
  death_causes: Record<string, number>;
  /** summary.json's `generalisation_gap`: set when training and held-out success intervals are disjoint. */
  generalisation_gap: { train: EventRate; held_out: EventRate; message: string } | null;
}

export interface EpisodeFailedEvent extends EventBase {
  type: 'episode_failed';
  episode: number;
  seed: number;
  steps: number;
  died: boolean;
  death_cause: string | null;
  /** Top-down path: [x, z] per step, for the dashboard map. */
  path: [number, number][];
}

export interface RewardErrorEvent extends EventBase {
  type: 'reward_error';
  file: string;
  /** 1-based line and column in the original reward file. */
  line: number;
  column: number;
  kind: string;
  message: string;
}

export interface SuggestionEvent extends EventBase {
  type: 'suggestion';
  id: string;
  message: string;
  /** 1-based inclusive line range in the reward file, when the suggestion concerns specific lines. */
  lines?: [number, number];
  /** Unified diff against the reward file, when the suggestion is a concrete patch. */
  diff?: string;
  /** The finding's cause (analyzer FindingKind). */
  kind?: string;
  /**
   * True for suggestions from training episodes while training runs; the ones after held-out evaluation
   * replace them (a `suggestion` event with provisional false/absent, or `finished`).
   */
  provisional?: boolean;
  /** Failed episodes it explains, of how many failed episodes examined (suggestions.json's coverage names). */
  explained_episodes?: number;
  failed_episodes?: number;
  /** An early warning worth stopping training for (offer "Stop and apply"). */
  early_warning?: boolean;
}

export interface LogEvent extends EventBase {
  type: 'log';
  level: 'info' | 'warn' | 'error';
  message: string;
}

/**
 * `sweep`: one run (a reward × seed training) changed state or made progress.
 */
export interface SweepRunEvent extends EventBase {
  type: 'sweep_run';
  /** `<reward>/seed-<n>`, unique within the sweep. */
  run: string;
  reward: string;
  seed: number;
  state: 'pending' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  /** Slurm job id, or the local job's process id; null before submission (results.json's `job_id`). */
  job_id: string | null;
  run_dir: string;
  frames: number;
  total_frames: number;
  /** Held-out success when completed: successes over episodes. */
  success?: { count: number; n: number };
  /** Why it failed. */
  message?: string;
}

export interface FinishedEvent extends EventBase {
  type: 'finished';
  ok: boolean;
  run_dir: string;
  /** Path of summary.json when the run produced one. */
  summary: string | null;
  error?: string;
}

export type RunnerEvent =
  | StartedEvent
  | ProgressEvent
  | EvalEvent
  | EpisodeFailedEvent
  | RewardErrorEvent
  | SuggestionEvent
  | LogEvent
  | SweepRunEvent
  | FinishedEvent;

type WithoutBase<E> = E extends RunnerEvent ? Omit<E, 'v' | 't'> : never;

export function makeEvent(e: WithoutBase<RunnerEvent>): RunnerEvent {
  return { v: EVENTS_VERSION, t: Date.now(), ...e } as RunnerEvent;
}

/** Parses one ndjson line; returns undefined for lines that are not events of this version (e.g. stray logs). */
export function parseEvent(line: string): RunnerEvent | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const e = JSON.parse(line) as Partial<RunnerEvent>;
    return e && e.v === EVENTS_VERSION && typeof e.type === 'string' ? (e as RunnerEvent) : undefined;
  } catch {
    return undefined;
  }
}
