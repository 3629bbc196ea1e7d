// Playback of a probe episode: one episode of the task's probe bank (a teacher's success, a random policy or a
// scripted failure mode, probe/bank.ts) re-simulated from its seed and actions like a run's episode, with the
// per-step rewards of a reward file replayed on it in the real sandbox as the probes replay it (probe/replay.ts).
// What a probe finding ("standing still is paid … more than success") is about, to watch.
import { RewardError } from '../reward/index';
import { BEHAVIOURS, continuesPastProbe, probeBankAsync, replayBank, type Behaviour, type ProbeBank } from '../probe/index';
import { decodeStepCodes } from '../records';
import type { TaskSpec } from '../tasks';
import { PlaybackError, replayActions, type Playback, type ReplayOptions } from './replay';

/** Which probe episode `which` names: its 1-based number, or the first episode of a behaviour. Undefined if none. */
export function probeEpisodeIndex(bank: ProbeBank, which: string): number | undefined {
  if (/^\d+$/.test(which)) {
    const n = Number(which);
    return n >= 1 && n <= bank.episodes.length ? n - 1 : undefined;
  }
  const i = bank.episodes.findIndex((e) => e.behaviour === which);
  return i >= 0 ? i : undefined;
}

/** The behaviours a bank holds, for a usage error. */
export function bankBehaviours(bank: ProbeBank): Behaviour[] {
  return [...new Set(bank.episodes.map((e) => e.behaviour))];
}

/**
 * Plays probe episode `index` (0-based) of the task's bank (`bank`, else the task's, recorded if need be) with
 * the per-step rewards of `rewardFile` (`source`: its unsaved text).
 */
export async function probePlayback(
  rewardFile: string,
  task: TaskSpec,
  index: number,
  opts: ReplayOptions & { bank?: ProbeBank; source?: string } = {},
): Promise<Playback> {
  const bank = opts.bank ?? (await probeBankAsync(task));
  const ep = bank.episodes[index];
  if (!ep) throw new PlaybackError(`the probe bank of ${task.id} has ${bank.episodes.length} episodes, not ${index + 1}`);
  if (typeof ep.actions !== 'string') throw new PlaybackError(`probe episode ${index + 1} has no recorded actions`);
  let replay: Awaited<ReturnType<typeof replayBank>>;
  try {
    // This episode alone, as the probes replay every episode of the bank: its own GLOBAL_DATA and history.
    replay = await replayBank(rewardFile, task, { ...bank, episodes: [ep] }, opts.source);
  } catch (err) {
    if (err instanceof RewardError) throw new PlaybackError(`the reward file cannot run: ${err.message}`);
    throw err;
  }
  const trace = replay.traces[0];
  const rewards = trace ? Array.from(trace.values.subarray(0, trace.recorded)) : [];
  const number = index + 1;
  const playback = replayActions(
    task,
    {
      episode: number,
      seed: ep.seed,
      actions: decodeStepCodes(ep.actions),
      rewards,
      split: replay.compiled.exportsKind === 'dense_sparse',
      path: ep.obs.map((o) => o.position),
      success: ep.success,
      died: ep.died,
    },
    opts,
  );
  const description = BEHAVIOURS[ep.behaviour];
  const remarks = [
    `Probe episode ${number} of ${bank.episodes.length} of ${task.id}'s probe bank: ${description} (world ${ep.seed}). The rewards are ${rewardFile}'s, replayed in the sandbox as training calls it.`,
  ];
  if (continuesPastProbe(ep) && ep.obs.length - 1 < bank.maxSteps)
    remarks.push(
      `The probe stops after ${(ep.obs.length - 1).toLocaleString('en-US')} steps; a training episode of ${task.id} lasts up to ${bank.maxSteps.toLocaleString('en-US')}: the probes count the rest at the rate the behaviour is paid steadily.`,
    );
  const failure = replay.failure;
  if (failure) remarks.push(`The reward failed at step ${failure.step}: ${failure.error.message}. The timeline stops there.`);
  return {
    ...playback,
    outcome: ep.success ? 'succeeded' : ep.died ? 'died' : `${description}: the probe ended without success`,
    remarks: [...remarks, ...playback.remarks],
    probe: { number, of: bank.episodes.length, behaviour: ep.behaviour, description, reward_file: rewardFile },
  };
}
