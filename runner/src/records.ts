// On-disk records of a run, written by the trainer/evaluator and read by the analyzer, the loop and the
// extension's dashboard. One definition here so writer and readers cannot drift.
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
    success_rate: number;
    entropy: number;
    fps: number;
  };
  eval: {
    episodes: number;
    success_rate: number;
    death_rate: number;
    death_causes: Record<string, number>;
    avg_steps: number;
    avg_distance_moved: number;
  };
}

/** One line of `DIR/metrics.ndjson`, one per PPO update. */
export interface UpdateMetrics {
  update: number;
  frames: number;
  fps: number;
  mean_return: number;
  success_rate: number;
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
  checkpoint: 'checkpoint',
  episodes: 'eval/episodes.ndjson',
  failedEpisodes: 'eval/failed_episodes.json',
  suggestions: 'suggestions.json',
  rewardCopy: 'reward.ts',
} as const;
