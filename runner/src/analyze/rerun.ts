// Re-runs a reward file in its sandbox on the recorded observations of failed episodes (their last steps), so
// the analyzer can say where the reward's sign points away from success with the reward as it is now (the
// file the user edits, or a patched candidate), not only as it was when the episodes were recorded.
import { splitScaled, stepObservationOf } from '../schema';
import type { EpisodeRecord } from '../records';
import { RewardError, RewardSandbox } from '../reward/index';
import type { RerunStep } from './finding';

/** The dense term's sign recovered from a combined reward `sign(sparse) * 1 + sign(dense) * 0.1`. */
export function denseSign(reward: number): number {
  return Math.sign(splitScaled(reward).dense);
}

/**
 * Each episode's recorded steps after the first, re-run from a fresh GLOBAL_DATA at the first recorded step
 * (the steps before it were not recorded). Returns undefined, with the reason, when the reward cannot run.
 */
export async function rerunReward(file: string, episodes: EpisodeRecord[], attack: boolean): Promise<{ steps: Map<number, RerunStep[]> } | { error: string }> {
  let sandbox: RewardSandbox | undefined;
  const keepAlive = setInterval(() => {}, 1 << 30); // the sandbox host is unref'd
  try {
    sandbox = await RewardSandbox.open(file, 1, { attack });
    const out = new Map<number, RerunStep[]>();
    for (const ep of episodes) {
      const steps = ep.lastSteps;
      if (steps.length < 2) continue;
      await sandbox.beginEpisodes([0], [stepObservationOf(steps[0]!)]);
      const values: RerunStep[] = [];
      for (const s of steps.slice(1)) {
        const reward = (await sandbox.step([stepObservationOf(s)]))[0]!;
        values.push({ step: s.step, reward, dense: denseSign(reward) });
      }
      out.set(ep.episode, values);
    }
    return { steps: out };
  } catch (err) {
    if (err instanceof RewardError) return { error: `${err.file}:${err.line}:${err.column}: ${err.detail}` };
    throw err;
  } finally {
    await sandbox?.close();
    clearInterval(keepAlive);
  }
}
