// The one episode recorder: every episode a run records (held-out evaluation, training's live analysis,
// rollout) goes through it, so eval/episodes.ndjson has one format whoever wrote it.
import { GAME_FACTS, type StepObservation } from '../schema';
import type { StepInfo } from '../env/types';
import type { EpisodeRecord, RecordedStep } from '../records';

/** The paper's L: failed episodes keep their last 32 steps. */
export const LAST_STEPS = 32;

interface Running {
  seed: number;
  counted: boolean;
  episode: number;
  steps: RecordedStep[];
  path: [number, number, number][];
  ret: number;
}

/**
 * The one episode recorder: turns an episode's steps into an EpisodeRecord in the analyzer's format (last 32
 * steps, final state, full path). Evaluation records held-out episodes with it, training its own episodes for
 * the suggestions it streams while it runs, and `rollout` every episode of its policy.
 */
export class EpisodeRecorder {
  private readonly runs: Running[] = [];

  /** Starts recording env `i`'s episode (`counted` false: step through it without keeping anything). */
  begin(i: number, seed: number, episode: number, obs: StepObservation, counted = true): void {
    this.runs[i] = { seed, counted, episode, steps: [], path: [[obs.position[0], obs.position[1], obs.position[2]]], ret: 0 };
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
    run.path.push([obs.position[0], obs.position[1], obs.position[2]]);
    run.steps.push({
      step: info.step,
      action: GAME_FACTS.actions[action]!,
      reward,
      position: obs.position,
      inventory_change: obs.inventory_change,
      nearest: obs.nearest,
      health: obs.health,
    });
    if (run.steps.length > LAST_STEPS) run.steps.shift();
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
    };
  }
}
