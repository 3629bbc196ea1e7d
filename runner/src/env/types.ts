// The one interface both backends (headless simulator, mineflayer on a real server) implement. Everything
// above it (rewards, PPO, evaluation, analysis) sees only this.
import type { ActionName, DeathCause, StepObservation } from '../schema';
import type { TaskSpec } from '../tasks';

export interface StepInfo {
  /** Step index within the episode, 1 for the first step after reset. */
  step: number;
  /** World seed of the episode this step belongs to (for a done env: the episode that just ended). */
  seed?: number;
  success: boolean;
  /** The episode ended this step (success, death or time limit); the env has already been reset. */
  done: boolean;
  /** Ended by the time limit. */
  truncated: boolean;
  died: boolean;
  deathCause: DeathCause | null;
  blockUnderFoot: string;
  inventory: Record<string, number>;
}

export interface VecStepResult {
  /** numEnvs × featureSize policy features; for a done env, the first features of its next episode. */
  features: Float32Array;
  /** This step's observation per env (for a done env: its terminal step). */
  obs: StepObservation[];
  info: StepInfo[];
  /** For a done env, the first observation of the episode it was reset into (else null). */
  resetObs: (StepObservation | null)[];
  /** For an env whose episode the time limit cut (`info.truncated`), the policy features of its last state, which
   * `features` no longer holds (PPO bootstraps the cut return from their value); else null. */
  terminalFeatures: (Float32Array | null)[];
}

/** The action that holds an env (evaluation holds envs whose episodes no longer count). */
export const HOLD_ACTION = -1;

export interface VecEnv {
  readonly backend: 'sim' | 'mineflayer';
  readonly task: TaskSpec;
  readonly numEnvs: number;
  readonly featureSize: number;
  /** Starts every env on a fresh world from its seed; returns the first features and observations. */
  reset(seeds: number[]): Promise<{ features: Float32Array; obs: StepObservation[] }>;
  /**
   * One action index (into GAME_FACTS.actions) per env. Done envs auto-reset onto the next seed. An env given
   * HOLD_ACTION is not stepped where the backend can hold it (the simulator; mineflayer plays no_op): its entries
   * in the result repeat its last step's and are not meant to be read.
   */
  step(actions: Int32Array): Promise<VecStepResult>;
  close(): Promise<void>;
}

/**
 * Optional extension of a VecEnv whose last envs step in another thread: a step split in two, so that the caller
 * can work (rewards, acting, recording) on the first envs while the others are stepped. The envs, worlds and
 * results are those of `step`; only when each part is stepped moves.
 */
export interface SplitStepVecEnv extends VecEnv {
  /** Envs [0, localEnvs) step in the calling thread (`stepLocal`), envs [localEnvs, numEnvs) in another. */
  readonly localEnvs: number;
  /** Starts stepping envs [localEnvs, numEnvs) with these actions (one per env, HOLD_ACTION holds); returns at once. */
  startRemoteStep(actions: Int32Array): void;
  /** The result of the remote step started last, for envs [localEnvs, numEnvs) (index 0 is env localEnvs). */
  finishRemoteStep(): Promise<VecStepResult>;
  /** Steps envs [0, localEnvs) in this thread now. */
  stepLocal(actions: Int32Array): VecStepResult;
}

/** The env as a SplitStepVecEnv when it can step part of its envs elsewhere (else null: step it whole). */
export function splitStepOf(env: VecEnv): SplitStepVecEnv | null {
  const split = env as Partial<SplitStepVecEnv>;
  return typeof split.startRemoteStep === 'function' && split.localEnvs !== undefined && split.localEnvs > 0 && split.localEnvs < env.numEnvs
    ? (env as SplitStepVecEnv)
    : null;
}

export interface EnvOptions {
  task: TaskSpec;
  numEnvs: number;
  /** Seed of the first episode; later episodes of env i take successive seeds from a per-env stream. */
  seed: number;
  backend?: 'sim' | 'mineflayer';
  /** mineflayer only: host:port of an external server; default is an embedded flying-squid. */
  server?: string;
  /** sim only: worker threads that step shares of the envs besides the calling thread (0 = all in this
   * thread); default: one per further core, for batches of 8 or more. */
  workers?: number;
  /**
   * sim only, with workers: the calling thread's own work between steps (rewards, acting, recording), per env, as a
   * fraction of an env's step; its shard shrinks by it so that it and the workers keep pace. Default 0.
   */
  callerWork?: number;
}

export type { ActionName };
export type { AgentPosition, DeathCause, NearestBlocks, StepObservation } from '../schema';
