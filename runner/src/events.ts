// The runner's `--events ndjson` stream: one JSON object per line on stdout. Versioned and typed here, once;
// the extension imports these types, so a change on one side is a compile error on the other.
//
// Field names are the run files' own (ARCHITECTURE.md, "Names in files and events"): snake_case, and a field
// that is also in a file (summary.json, metrics.ndjson, results.json, suggestions.json) has the same name and
// shape there, so the dashboard reads a live event and a past run's records with the same code.
// The shapes an event shares with a file are declared once, in records.ts, and extended here.
import type { BelowStart, EvalSummary, GeneralisationGap, UpdateMetrics } from './records';

/** 2: field names as in the run files (snake_case; version 1 had camelCase). */
export const EVENTS_VERSION = 2;

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

/** The update's metrics.ndjson line (records.ts `UpdateMetrics`) and the frames the run will train in all. */
export interface ProgressEvent extends EventBase, UpdateMetrics {
  type: 'progress';
  total_frames: number;
}

/** summary.json's `eval` (records.ts `EvalSummary`) and its `generalisation_gap`: set when the 95 % interval of
 * training and held-out success (Newcombe) excludes 0. */
export interface EvalEvent extends EventBase, EvalSummary {
  type: 'eval';
  generalisation_gap: GeneralisationGap | null;
  /** summary.json's `below_start`: a fine-tuned run below its starting checkpoint's held-out success. */
  below_start: BelowStart | null;
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
  /** Why it failed; while queued, why the scheduler holds it (Slurm's pending reason, in words). */
  message?: string;
}

export interface FinishedEvent extends EventBase {
  type: 'finished';
  ok: boolean;
  run_dir: string;
  /** Path of summary.json when the run produced one. */
  summary: string | null;
  error?: string;
  /** Set when the pre-training check refused the reward: how many errors it found (nothing was written). */
  check_errors?: number;
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
