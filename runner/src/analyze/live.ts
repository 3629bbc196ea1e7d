// Suggestions while training runs: the same classifier over the most recent finished *training* episodes,
// streamed as provisional `suggestion` events (with the episode counts behind them) that the editor shows as
// code actions until the suggestions from held-out evaluation replace them. An early warning marks a finding
// worth stopping for: most recent episodes dying of one cause, or a reward that has never been positive.
import { makeEvent, type RunnerEvent } from '../events';
import type { EpisodeRecord } from '../records';
import type { TaskSpec } from '../tasks';
import { namesRead, toSuggestion } from './analyze';
import { findFailures, type RerunStep } from './findings';
import { denseSign } from './rerun';
import { preparePatches } from './patches';

/** Early warnings fire only in the first part of a run, where stopping saves the most. */
const EARLY_FRACTION = 0.5;
const EARLY_DEATH_SHARE = 0.5;

/** Provisional suggestion events for a window of finished training episodes. */
export async function liveAnalysis(
  window: EpisodeRecord[],
  at: { frames: number; totalFrames: number; task: TaskSpec; reward: { file: string; text: string } },
): Promise<RunnerEvent[]> {
  const failed = window.filter((e) => !e.success);
  if (failed.length === 0) return [];
  // The reward as the run trains it, named by the file the patches target (the user's, or the run's copy).
  const reward = at.reward;
  await preparePatches(reward.file);
  // The recorded rewards are the reward's own output on these steps: its dense sign without a second sandbox.
  // The findings say so ('recorded'): nothing is re-run here, unlike the analysis after evaluation.
  const rerun = new Map<number, RerunStep[]>(
    failed.map((e) => [e.episode, e.lastSteps.slice(1).map((s) => ({ step: s.step, reward: s.reward, dense: denseSign(s.reward) }))]),
  );
  const findings = findFailures(window, at.task, true, { names: namesRead(reward.text), rerun, rerunSource: 'recorded' });
  const causes = new Map<string, number>();
  for (const e of failed) if (e.died) causes.set(e.deathCause ?? 'other', (causes.get(e.deathCause ?? 'other') ?? 0) + 1);
  const main = [...causes].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  const early = at.frames <= EARLY_FRACTION * at.totalFrames;
  const progress = `${Math.round((100 * at.frames) / at.totalFrames)} % into training`;
  return findings.map((f) => {
    const s = toSuggestion(f, reward, main);
    const warning = early && ((f.kind === 'death' && f.episodeIds.length >= EARLY_DEATH_SHARE * window.length) || f.kind === 'reward-never-positive');
    return makeEvent({
      type: 'suggestion',
      id: `training/${s.id}`,
      kind: s.kind,
      message: `Provisional (${s.episode_ids.length} of ${failed.length} failed training episodes of the last ${window.length}, ${progress}): ${s.message}`,
      ...(s.lines ? { lines: s.lines } : {}),
      ...(s.diff ? { diff: s.diff } : {}),
      provisional: true,
      explained_episodes: s.episode_ids.length,
      failed_episodes: failed.length,
      ...(warning ? { early_warning: true } : {}),
    });
  });
}
