// On-disk records of a run, written by the trainer/evaluator and read by the analyzer, the loop and the
// extension's dashboard. One definition here so writer and readers cannot drift.
import { wilson } from './stats';
import type { AgentPosition, DeathCause, NearestBlocks } from './schema';

/** One step of a recorded episode, in the analyzer's format (the paper's trajectory fields). */
export interface RecordedStep {
  step: number;
  action: string;
  reward: number;
  position: AgentPosition;
  inventory_change: Record<string, number>;
  nearest: NearestBlocks;
  health: number;
}

/** An evaluation episode, as stored in `DIR/eval/episodes.ndjson` (one per line). */
export interface EpisodeRecord {
  episode: number;
  seed: number;
  success: boolean;
  steps: number;
  died: boolean;
  deathCause: DeathCause | null;
  truncated: boolean;
  return: number;
  /** Distance between first and last position, metres. */
  distanceMoved: number;
  /** Last 32 steps (the paper's L = 32), oldest first. */
  lastSteps: RecordedStep[];
  final: {
    health: number;
    inventory: Record<string, number>;
    nearest: NearestBlocks;
    blockUnderFoot: string;
    died: boolean;
  };
  /** Whole path, [x, y, z] per step, for maps and motion analysis. */
  path: [number, number, number][];
}

/** A rate over episodes with its Wilson 95 % interval (stats.ts `wilson`); rate null when n = 0 (no estimate). */
export interface RateRecord {
  count: number;
  n: number;
  rate: number | null;
  ci95: [number, number];
}

/** count of n as a RateRecord (Wilson 95 % interval from stats.ts). */
export function rateRecord(count: number, n: number): RateRecord {
  const w = wilson(count, n);
  return { count, n, rate: n > 0 ? w.rate : null, ci95: w.ci95 };
}

/**
 * Training success as the curve shows it: episodes that *started* in a window of frames, each counted when it
 * ends, over a window whose episodes have all ended. Counting the last N *finished* episodes instead favours
 * short (mostly successful) episodes, because long failures are still running when the window closes.
 */
export interface TrainingSuccessRecord extends RateRecord {
  /** The window: episodes whose first frame lies in [from, to). */
  started_from_frame: number;
  started_to_frame: number;
  /** Mean return of the same episodes (null when n = 0). */
  mean_return: number | null;
}

/** Named when training and held-out success differ beyond both 95 % intervals (disjoint intervals). */
export interface GeneralisationGap {
  train: RateRecord;
  held_out: RateRecord;
  /** One sentence with both figures, for summaries, the CLI and the dashboard. */
  message: string;
}

/** `DIR/summary.json`. */
export interface RunSummary {
  task: string;
  reward_file: string | null;
  reward_sha256: string | null;
  seed: number;
  env: 'sim' | 'mineflayer';
  env_steps: number;
  wall_seconds: number;
  backend: string;
  train: {
    updates: number;
    frames: number;
    mean_return: number;
    /** = success.rate: the unbiased training success (null until a window of started episodes has ended). */
    success_rate: number | null;
    success: TrainingSuccessRecord;
    entropy: number;
    fps: number;
  };
  eval: {
    episodes: number;
    success_rate: number;
    death_rate: number;
    /** success_rate and death_rate with their counts and Wilson 95 % intervals. */
    success: RateRecord;
    death: RateRecord;
    death_causes: Record<string, number>;
    avg_steps: number;
    avg_distance_moved: number;
  };
  /** Present (non-null) when training and held-out success intervals are disjoint. */
  generalisation_gap: GeneralisationGap | null;
  /** How the run trained: the checkpoint it started from (null: from scratch) and the PPO hyperparameters in
   * effect (KL weight to the initial policy, value pre-training updates, return normalisation, …). */
  config?: { init: string | null; hyperparameters: Record<string, number | boolean> };
}

/** One line of `DIR/metrics.ndjson`, one per PPO update. */
export interface UpdateMetrics {
  update: number;
  frames: number;
  fps: number;
  mean_return: number;
  /** Training success over episodes started in a window, all ended (TrainingSuccessRecord); null until one has. */
  success_rate: number | null;
  success: TrainingSuccessRecord;
  episodes: number;
  policy_loss: number;
  value_loss: number;
  entropy: number;
  kl: number;
  wall_seconds: number;
}

/** Where each record lives inside a run folder. */
export const RUN_FILES = {
  summary: 'summary.json',
  metrics: 'metrics.ndjson',
  /** The same lines as CSV, for spreadsheets and plotting tools. */
  metricsCsv: 'metrics.csv',
  /** The effective training configuration (flags over the configuration file over defaults). */
  config: 'config.json',
  /** `rewardsmith report`'s page for this run. */
  report: 'report.html',
  /** TensorBoard event files (when @tensorflow/tfjs-node is installed). */
  tensorboard: 'tensorboard',
  checkpoint: 'checkpoint',
  episodes: 'eval/episodes.ndjson',
  failedEpisodes: 'eval/failed_episodes.json',
  suggestions: 'suggestions.json',
  rewardCopy: 'reward.ts',
} as const;

/** Columns of metrics.csv, in the order of UpdateMetrics. */
export const METRICS_COLUMNS: readonly (keyof UpdateMetrics)[] = [
  'update', 'frames', 'fps', 'mean_return', 'success_rate', 'episodes', 'policy_loss', 'value_loss', 'entropy', 'kl', 'wall_seconds',
];

/** metrics.ndjson lines as CSV text (header + one row per update; fields the line lacks stay empty), with the
 * training-success count and interval as columns of their own. */
export function metricsCsv(lines: readonly Partial<UpdateMetrics>[]): string {
  const cell = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : '');
  const header = [...METRICS_COLUMNS, 'success_n', 'success_ci95_lo', 'success_ci95_hi'];
  const row = (m: Partial<UpdateMetrics>) => [...METRICS_COLUMNS.map((c) => cell(m[c])), cell(m.success?.n), cell(m.success?.ci95[0]), cell(m.success?.ci95[1])].join(',');
  return [header.join(','), ...lines.map(row)].join('\n') + '\n';
}

/** A sweep folder's files (`rewardsmith sweep --out DIR`). */
export const SWEEP_FILES = { results: 'results.json', table: 'results.md', plot: 'results.svg', state: 'sweep.json' } as const;

export type SweepRunState = 'pending' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** One (reward, seed) training of a sweep, in `DIR/results.json`. */
export interface SweepRunResult {
  reward: string;
  seed: number;
  /** Slurm job id, or the local job's process id. */
  job_id: string | null;
  /** Run folder, relative to the sweep folder. */
  run_dir: string;
  state: SweepRunState;
  /** Held-out success over the run's evaluation episodes (Wilson 95 % interval); null until completed. */
  success: RateRecord | null;
  deaths: RateRecord | null;
  /** From the job's start to train's exit, seconds (time queued not included). */
  wall_seconds: number | null;
  message: string | null;
}

/** One reward of a sweep, in `DIR/results.json`. */
export interface SweepRewardResult {
  reward: string;
  /** The reward file as given to the sweep. */
  reward_file: string;
  /** Completed runs (seeds) and their evaluation episodes behind the estimate. */
  seeds: number;
  episodes: number;
  /** Mean over seeds of held-out success; null without a completed run. */
  mean_success: number | null;
  /** Percentile bootstrap over seeds, then episodes within each seed (stats.ts `bootstrapMean`). */
  ci95: [number, number] | null;
  mean_deaths: number | null;
  /** 1 = best mean success; equal means share a rank; null without a completed run. */
  rank: number | null;
}

/** `DIR/results.json` of a sweep. */
export interface SweepResults {
  version: 1;
  task: string;
  steps: number;
  seeds: number[];
  engine: 'local' | 'slurm';
  /** Wall time of the sweep command that wrote this file (a resumed sweep counts only its own part). */
  wall_seconds: number;
  runs: SweepRunResult[];
  rewards: SweepRewardResult[];
}
