// A reward whose sign never changes over the recorded steps: never positive (no learning signal, or only
// punishment) or always positive (paid for existing). Which case to add is the author's call: no patch.
import { SCALE_RULE } from '../../schema';
import type { EpisodeRecord } from '../../records';
import { defineFinding, fmt, KEEP_EVIDENCE, rewardSummary, type FindingOf } from '../finding';

function rewardSignFinding(episodes: EpisodeRecord[]): FindingOf<'reward-never-positive' | 'reward-always-positive'> | undefined {
  const episodeIds = episodes.filter((ep) => !ep.success).map((ep) => ep.episode);
  const steps = episodes.flatMap((ep) => ep.lastSteps.map((s) => ({ ep, s })));
  if (steps.length < 32) return undefined;
  const positive = steps.filter((x) => x.s.reward > 0);
  const negative = steps.filter((x) => x.s.reward < 0);
  const distinct = [...new Set(steps.map((x) => x.s.reward))].sort((a, b) => a - b);
  const dense = SCALE_RULE.denseWeight;
  const evidence = episodes.slice(0, KEEP_EVIDENCE).map((ep) => {
    const r = rewardSummary(ep.lastSteps);
    return {
      episode: ep.episode,
      seed: ep.seed,
      steps: [ep.lastSteps[0]?.step ?? 1, ep.steps] as [number, number],
      note: `${r.text} over the last ${ep.lastSteps.length} steps; return ${fmt(ep.return, 2)}`,
    };
  });
  if (positive.length === 0) {
    const allZero = negative.length === 0;
    return {
      id: 'reward-never-positive',
      kind: 'reward-never-positive',
      share: 1,
      message: `The reward was never positive in ${steps.length} recorded steps of ${episodes.length} episodes (values seen: ${distinct.join(', ')}): ${allZero ? 'it was 0 throughout, so the agent got no learning signal at all' : 'nothing the agent did was ever marked as progress'}.`,
      episodeIds,
      noPatch:
        "which progress to pay for depends on the task and the reward's intent; the other findings' patches (exploration, approach) add positive cases where they apply",
      suggestion: `Give the dense term a positive case for progress (target came into view, got closer, new ground covered)${allZero ? '; a reward that only fires on success is the sparse baseline the paper shows failing' : '; a reward that only punishes teaches the agent to end episodes or do nothing'}. Check that dense can return a positive value at all (it contributes ±${dense}).`,
      evidence,
    };
  }
  if (negative.length === 0 && positive.length === steps.length) {
    return {
      id: 'reward-always-positive',
      kind: 'reward-always-positive',
      share: 1,
      message: `The reward was positive on every one of ${steps.length} recorded steps of ${episodes.length} episodes (values seen: ${distinct.join(', ')}): the agent is paid for existing, whatever it does.`,
      episodeIds,
      noPatch: 'the reward must lose its unconditional positive case, which only its author can place; the approach and stuck patches add the negative cases',
      suggestion:
        'Make the positive cases conditional on progress and add negative cases (moving away, losing sight of the target, standing still); with an always-positive reward the longest episode is the best one, so the agent learns to stall.',
      evidence,
    };
  }
  return undefined;
}

export const rewardSign = defineFinding({
  meta: {
    id: 'reward-sign',
    kinds: ['reward-never-positive', 'reward-always-positive'],
    description: 'a reward never positive, or positive on every recorded step',
    needs: ['rewarded'],
  },
  find: (ctx) => rewardSignFinding(ctx.episodes),
});
