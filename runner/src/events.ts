// The runner's `--events ndjson` stream: one JSON object per line on stdout. Versioned and typed here, once;
// the extension imports these types, so a change on one side is a compile error on the other.
export const EVENTS_VERSION = 1;

interface EventBase {
  v: typeof EVENTS_VERSION;
  /** Milliseconds since the Unix epoch. */
  t: number;
}

export interface StartedEvent extends EventBase {
  type: 'started';
  command: 'train' | 'eval' | 'loop' | 'rollout' | 'sweep';
  task: string;
  rewardFile: string | null;
  runDir: string;
  backend: string;
  env: 'sim' | 'mineflayer';
  totalFrames: number;
  numEnvs: number;
  resumedFromFrames: number;
}

export interface ProgressEvent extends EventBase {
  type: 'progress';
  frames: number;
  totalFrames: number;
  fps: number;
  meanReturn: number;
  /**
   * Training success over the episodes that started in a recent window and have all ended (each counted when
   * it ends; summary.json train.success); null until such a window exists. Not "the last N finished".
   */
  successRate: number | null;
  /** Episodes behind successRate, and its Wilson 95 % interval. */
  successEpisodes: number;
  successCi95: [number, number];
  episodes: number;
  update: number;
  policyLoss: number;
  valueLoss: number;
  entropy: number;
}

export interface EvalEvent extends EventBase {
  type: 'eval';
  episodes: number;
  successRate: number;
  deathRate: number;
  /** Wilson 95 % intervals of successRate and deathRate over `episodes`. */
  successCi95: [number, number];
  deathCi95: [number, number];
  avgSteps: number;
  deathCauses: Record<string, number>;
  /** Set when training and held-out success intervals are disjoint: the warning, with both figures. */
  generalisationGap: string | null;
}

export interface EpisodeFailedEvent extends EventBase {
  type: 'episode_failed';
  episode: number;
  seed: number;
  steps: number;
  died: boolean;
  deathCause: string | null;
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
  /** Failed episodes it explains, of how many failed episodes examined. */
  episodes?: number;
  failedEpisodes?: number;
  /** An early warning worth stopping training for (offer "Stop and apply"). */
  earlyWarning?: boolean;
}

export interface LogEvent extends EventBase {
  type: 'log';
  level: 'info' | 'warn' | 'error';
  message: string;
}

/**
 * `sweep`: one run (a reward × seed training) changed state or made progress. Added to version 1 (a new
 * type: readers of version 1 that do not know it skip it).
 */
export interface SweepRunEvent extends EventBase {
  type: 'sweep_run';
  /** `<reward>/seed-<n>`, unique within the sweep. */
  run: string;
  reward: string;
  seed: number;
  state: 'pending' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  /** Slurm job id, or the local job's process id; null before submission. */
  jobId: string | null;
  runDir: string;
  frames: number;
  totalFrames: number;
  /** Held-out success when completed: successes over episodes. */
  success?: { count: number; n: number };
  /** Why it failed. */
  message?: string;
}

export interface FinishedEvent extends EventBase {
  type: 'finished';
  ok: boolean;
  runDir: string;
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
