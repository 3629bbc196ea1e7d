// The reward is gamed: its dense term pays on steps without progress towards the target, or failed episodes
// earn more than successful ones. It asks for target-progress's patch: only a new closest distance pays.
import type { EpisodeRecord } from '../../records';
import type { TaskSpec } from '../../tasks';
import {
  defineFinding,
  fmt,
  KEEP_EVIDENCE,
  pct,
  plural,
  PROGRESS_PER_STEP,
  targetNames,
  targetSeries,
  type EpisodeEvidence,
  type FindingOf,
  type RewardFacts,
} from '../finding';
import { approachRecord, type ApproachRecordRequest } from './target-progress';

/** Path length of an episode on the ground plane, metres. */
function pathLength(ep: EpisodeRecord): number {
  let total = 0;
  for (let i = 1; i < ep.path.length; i++) total += Math.hypot(ep.path[i]![0] - ep.path[i - 1]![0], ep.path[i]![2] - ep.path[i - 1]![2]);
  return total;
}

/** Successful episodes needed before their mean return is a yardstick for the failed ones. */
const MIN_WINS_FOR_RETURNS = 3;

/**
 * The reward is gamed, seen two ways. On the failed episodes' recorded steps (re-run, or as received) its dense
 * term is positive on steps that make no progress towards the target; and whole failed episodes earned more
 * than the successful ones do on average: failing pays more than succeeding, so an agent that dawdles (or
 * approaches, turns away and approaches again) does better than one that finishes. The last recorded steps
 * of such an episode can look like an honest approach; its return over the whole episode says otherwise.
 */
function gamedFinding(
  episodes: EpisodeRecord[],
  task: TaskSpec | undefined,
  reward: RewardFacts | undefined,
): FindingOf<'reward-gamed', ApproachRecordRequest> | undefined {
  const targets = targetNames(task);
  if (!reward || targets.length === 0) return undefined;
  const recorded = reward.rerunSource === 'recorded';
  const failed = episodes.filter((ep) => !ep.success);
  // Returns of the reward being analysed: as recorded, or re-run over the recorded last steps when it is
  // another reward than the one the episodes were recorded with (then episodes too short to re-run drop out).
  const rerunReturns = reward.returns;
  const returnOf = (ep: EpisodeRecord) => (rerunReturns ? rerunReturns.get(ep.episode) : ep.return);
  const returnText = (ep: EpisodeRecord) =>
    rerunReturns ? `re-run return over its last ${ep.lastSteps.length - 1} recorded steps ${fmt(returnOf(ep) ?? 0, 1)}` : `return ${fmt(ep.return, 1)}`;
  const evidence = new Map<number, EpisodeEvidence>();
  let idle = 0,
    idlePaid = 0,
    away = 0,
    awayPaid = 0;
  for (const ep of failed) {
    const rerun = reward.rerun?.get(ep.episode);
    if (!rerun) continue;
    const byStep = new Map(rerun.map((r) => [r.step, r]));
    let epIdle = 0,
      epPaid = 0;
    const series = targetSeries(ep, targets);
    for (let i = 1; i < series.length; i++) {
      const prev = series[i - 1]!,
        cur = series[i]!;
      const r = byStep.get(cur.step);
      if (!r || prev.d === undefined) continue;
      const movedAway = cur.d === undefined || cur.d > prev.d + 1e-6;
      const progress = cur.d !== undefined && prev.d - cur.d >= PROGRESS_PER_STEP;
      if (progress) continue;
      epIdle++;
      if (r.dense > 0) epPaid++;
      if (movedAway) {
        away++;
        if (r.dense > 0) awayPaid++;
      }
    }
    idle += epIdle;
    idlePaid += epPaid;
    if (epIdle >= 8 && epPaid >= 0.5 * epIdle) {
      evidence.set(ep.episode, {
        episode: ep.episode,
        seed: ep.seed,
        steps: [ep.lastSteps[0]?.step ?? 1, ep.steps],
        note: `${recorded ? 'rewards received on' : 're-run on'} the last ${ep.lastSteps.length} steps: dense positive on ${epPaid} of the ${epIdle} steps with the target in view and no progress towards it (less than ${PROGRESS_PER_STEP} m closer); ${returnText(ep)}`,
      });
    }
  }
  const wins = episodes.filter((ep) => ep.success && returnOf(ep) !== undefined);
  const mean = (xs: EpisodeRecord[]) => xs.reduce((t, ep) => t + returnOf(ep)!, 0) / Math.max(1, xs.length);
  const winMean = mean(wins);
  const failedWithReturns = failed.filter((ep) => returnOf(ep) !== undefined);
  // Failed episodes (deaths aside: they have their own cause) whose return beat the successful episodes' mean.
  const overpaid = wins.length >= MIN_WINS_FOR_RETURNS ? failedWithReturns.filter((ep) => !ep.died && returnOf(ep)! > winMean) : [];
  for (const ep of overpaid) {
    if (evidence.has(ep.episode)) continue;
    const walked = pathLength(ep);
    evidence.set(ep.episode, {
      episode: ep.episode,
      seed: ep.seed,
      steps: [1, ep.steps],
      note: `${rerunReturns ? returnText(ep) : `return ${fmt(ep.return, 1)} over ${ep.steps} steps`} without success, above the ${fmt(winMean, 1)} mean of the ${wins.length} successful episodes; walked ${fmt(walked, 0)} m to end ${fmt(ep.distanceMoved, 0)} m from its start`,
    });
  }
  if (evidence.size === 0) return undefined;
  const returns =
    wins.length > 0 && failedWithReturns.length > 0
      ? ` Failing pays${mean(failedWithReturns) > winMean ? ' more than' : ' less than'} succeeding${rerunReturns ? ' with the reward analysed (its returns re-run over the recorded last steps of every episode; the recorded returns are of the reward the run trained on)' : ''}: mean return ${fmt(mean(failedWithReturns), 1)} over ${failedWithReturns.length} failed episodes, ${fmt(winMean, 1)} over ${wins.length} successful ones${overpaid.length > 0 ? `; ${plural(overpaid.length, 'failed episode')} earned more than the successful mean` : ''}.`
      : '';
  const paidText =
    idle > 0
      ? `${recorded ? 'in the rewards the agent received during training (recorded, not re-run)' : 're-run in the sandbox on the recorded observations of the failed episodes'}, the dense term was positive on ${pct(idlePaid / idle)} of the ${idle} steps in which the agent had the target in view and made no progress towards it${away > 0 ? ` (on ${pct(awayPaid / away)} of the ${away} steps in which it moved away)` : ''}; `
      : '';
  const share = evidence.size / failed.length;
  const ids = [...evidence.keys()];
  return {
    id: 'reward-gamed',
    kind: 'reward-gamed',
    share,
    message: `The reward is gamed: ${paidText}in ${plural(evidence.size, 'failed episode')} of ${failed.length} (${pct(share)}) it paid for not finishing.${returns}`,
    suggestion:
      'Pay progress that cannot be farmed: +1 only for a new closest distance to the target this episode, nothing for approaching again after turning away, so finishing is the best way to earn.',
    evidence: ids.slice(0, KEEP_EVIDENCE).map((id) => evidence.get(id)!),
    episodeIds: ids,
    patch: {
      kind: 'approach-record',
      targets,
      step: PROGRESS_PER_STEP,
      why:
        idle > 0
          ? `${recorded ? 'in the rewards received during training' : 're-run on failed episodes'}, the dense term paid on ${pct(idlePaid / idle)} of the steps without progress towards the target${overpaid.length > 0 ? `, and ${pct(overpaid.length / failed.length)} of failed episodes earned more than the successful ones` : ''}; only a new closest distance pays now.`
          : `${pct(overpaid.length / failed.length)} of failed episodes earned more than the successful ones; only a new closest distance pays now.`,
    },
  };
}

export const rewardGamed = defineFinding({
  meta: {
    id: 'reward-gamed',
    kinds: ['reward-gamed'],
    description: 'a dense term that pays without progress, or failed episodes that earn more than successful ones',
    needs: ['failed', 'rewarded'],
  },
  find: (ctx) => gamedFinding(ctx.episodes, ctx.task, ctx.reward),
  patch: approachRecord,
});
