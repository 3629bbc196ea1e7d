// Re-runs a reward file in its sandbox on the recorded observations of failed episodes (their last steps), so
// the analyzer can say where the reward's sign points away from success with the reward as it is now (the
// file the user edits, or a patched candidate), not only as it was when the episodes were recorded.
import { splitScaled, stepObservationOf, type StepObservation } from '../schema';
import type { EpisodeRecord } from '../records';
import { RewardError, RewardSandbox } from '../reward/index';
import type { RerunStep } from './finding';

/** The dense term's sign recovered from a combined reward `sign(sparse) * 1 + sign(dense) * 0.1`. */
export function denseSign(reward: number): number {
  return Math.sign(splitScaled(reward).dense);
}

/**
 * The reward of each call on each sequence of observations, one after another in one sandbox: a sequence begins
 * an episode with its first observation (a fresh GLOBAL_DATA) and each later one is a step. `source` is the
 * file's text when it has been read already (a run's checked copy), else the file is read. Throws RewardError.
 */
export async function rewardsOn(file: string, sequences: StepObservation[][], attack: boolean, source?: string): Promise<number[][]> {
  let sandbox: RewardSandbox | undefined;
  const keepAlive = setInterval(() => {}, 1 << 30); // the sandbox host is unref'd
  try {
    sandbox = await RewardSandbox.open(file, 1, { attack, source });
    const out: number[][] = [];
    for (const obs of sequences) {
      const values: number[] = [];
      if (obs.length >= 2) {
        await sandbox.beginEpisodes([0], [obs[0]!]);
        for (const o of obs.slice(1)) values.push((await sandbox.step([o]))[0]!);
      }
      out.push(values);
    }
    return out;
  } finally {
    await sandbox?.close();
    clearInterval(keepAlive);
  }
}

/**
 * Each episode's recorded steps after the first, re-run from a fresh GLOBAL_DATA at the first recorded step
 * (the steps before it were not recorded). Returns undefined, with the reason, when the reward cannot run.
 */
export async function rerunReward(
  file: string,
  episodes: EpisodeRecord[],
  attack: boolean,
  source?: string,
): Promise<{ steps: Map<number, RerunStep[]> } | { error: string }> {
  const replayed = episodes.filter((ep) => ep.lastSteps.length >= 2);
  try {
    const rewards = await rewardsOn(
      file,
      replayed.map((ep) => ep.lastSteps.map(stepObservationOf)),
      attack,
      source,
    );
    const out = new Map<number, RerunStep[]>();
    replayed.forEach((ep, i) => {
      out.set(
        ep.episode,
        rewards[i]!.map((reward, t) => ({ step: ep.lastSteps[t + 1]!.step, reward, dense: denseSign(reward) })),
      );
    });
    return { steps: out };
  } catch (err) {
    if (err instanceof RewardError) return { error: `${err.file}:${err.line}:${err.column}: ${err.detail}` };
    throw err;
  }
}
