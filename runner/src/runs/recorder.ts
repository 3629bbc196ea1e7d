// The one episode recorder: every episode a run records (held-out evaluation, training's live analysis,
// rollout) goes through it, so eval/episodes.ndjson has one format whoever wrote it.
import { GAME_FACTS, stepObservationOf, type StepObservation } from '../schema';
import type { StepInfo } from '../env/types';
import { STEP_CODES, type EpisodeRecord, type RecordedStep } from '../records';

/** The paper's L: failed episodes keep their last 32 steps. */
export const LAST_STEPS = 32;

interface Running {
  seed: number;
  counted: boolean;
  episode: number;
  steps: RecordedStep[];
  path: [number, number, number][];
  ret: number;
  /** Every action so far, one STEP_CODES character each (what playback re-simulates from). */
  actions: string;
  /** Every reward so far, as codes into `rewardValues`, or plain numbers past STEP_CODES.length distinct values. */
  rewardCodes: string;
  rewardValues: number[];
  rewardList: number[] | null;
}

/**
 * The one episode recorder: turns an episode's steps into an EpisodeRecord in the analyzer's format (last 32
 * steps, final state, full path). Evaluation records held-out episodes with it, training its own episodes for
 * the suggestions it streams while it runs, and `rollout` every episode of its policy.
 */
export class EpisodeRecorder {
  private readonly runs: Running[] = [];

  /**
   * `rewardExports`: how the reward file is written (its records say so, so playback can split dense and
   * sparse); null when the episodes run without a reward (a rollout): then no per-step rewards are kept.
   */
  constructor(private readonly rewardExports: EpisodeRecord['reward_exports'] | null = null) {}

  /** Starts recording env `i`'s episode (`counted` false: step through it without keeping anything). */
  begin(i: number, seed: number, episode: number, obs: StepObservation, counted = true): void {
    this.runs[i] = {
      seed,
      counted,
      episode,
      steps: [],
      path: [[obs.position[0], obs.position[1], obs.position[2]]],
      ret: 0,
      actions: '',
      rewardCodes: '',
      rewardValues: [],
      rewardList: null,
    };
  }

  isCounted(i: number): boolean {
    return this.runs[i]?.counted ?? false;
  }

  seedOf(i: number): number {
    return this.runs[i]!.seed;
  }

  step(i: number, action: number, reward: number, obs: StepObservation, info: StepInfo): void {
    const run = this.runs[i]!;
    if (!run.counted) return;
    run.ret += reward;
    run.actions += STEP_CODES[action]!;
    if (this.rewardExports) this.recordReward(run, reward);
    run.path.push([obs.position[0], obs.position[1], obs.position[2]]);
    // Every field of the observation, so that the analyzer's replay hands the reward what the agent's reward saw.
    run.steps.push({ step: info.step, action: GAME_FACTS.actions[action]!, reward, ...stepObservationOf(obs) });
    if (run.steps.length > LAST_STEPS) run.steps.shift();
  }

  private recordReward(run: Running, reward: number): void {
    if (run.rewardList) {
      run.rewardList.push(reward);
      return;
    }
    let k = run.rewardValues.indexOf(reward);
    if (k < 0 && run.rewardValues.length < STEP_CODES.length) k = run.rewardValues.push(reward) - 1;
    if (k >= 0) {
      run.rewardCodes += STEP_CODES[k]!;
      return;
    }
    // More distinct rewards than codes: from here on the episode keeps plain numbers.
    run.rewardList = [...run.rewardCodes].map((c) => run.rewardValues[STEP_CODES.indexOf(c)]!);
    run.rewardList.push(reward);
  }

  /** The finished episode's record (call after its last `step`), or null when it was not counted. */
  finish(i: number, obs: StepObservation, info: StepInfo): EpisodeRecord | null {
    const run = this.runs[i]!;
    if (!run.counted) return null;
    const first = run.path[0]!,
      last = run.path[run.path.length - 1]!;
    return {
      episode: run.episode,
      seed: run.seed,
      success: info.success,
      steps: info.step,
      died: info.died,
      deathCause: info.deathCause,
      truncated: info.truncated,
      return: run.ret,
      distanceMoved: Math.hypot(last[0] - first[0], last[1] - first[1], last[2] - first[2]),
      lastSteps: run.steps,
      final: { health: obs.health, inventory: info.inventory, nearest: obs.nearest, blockUnderFoot: info.blockUnderFoot, died: info.died },
      path: run.path,
      actions: run.actions,
      ...(this.rewardExports
        ? { step_rewards: run.rewardList ?? { values: run.rewardValues, steps: run.rewardCodes }, reward_exports: this.rewardExports }
        : {}),
    };
  }
}
