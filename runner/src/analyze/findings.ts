// The analyzer's findings: every detector of findings/ in the order it runs, and `findFailures`, which runs
// them over a run's evaluation episodes (after `rewardsmith analyze`, and on training's recent episodes for
// the live suggestions). Failure patterns are found without an LLM, each with its evidence (episodes and step
// ranges) and, where the fix is code, the patch to ask for (patches.ts writes it).
//
// To add a finding: write findings/<id>.ts (meta, detector and, when its fix is code, its patch request and
// writer side by side; see finding.ts and patch.ts), add it to FINDINGS below, and test it beside it
// (findings/<id>.test.ts) on episodes that show it and on episodes it must stay quiet on.
import type { EpisodeRecord } from '../records';
import type { TaskSpec } from '../tasks';
import type { FindingContext, FindingRule, RewardFacts } from './finding';
import { attacksUnbreakable } from './findings/attacks-unbreakable';
import { backAndForth } from './findings/back-and-forth';
import { death } from './findings/death';
import { extremePitch } from './findings/extreme-pitch';
import { rewardGamed } from './findings/reward-gamed';
import { rewardMisaligned } from './findings/reward-misaligned';
import { rewardSign } from './findings/reward-sign';
import { stuck } from './findings/stuck';
import { targetProgress } from './findings/target-progress';
import { timeoutTargetUnseen } from './findings/timeout-target-unseen';
import { toolWornOut } from './findings/tool-worn-out';
import { turningFarmed } from './findings/turning-farmed';
import { unseenPay } from './findings/unseen-pay';

export type { EpisodeEvidence, RerunStep, RewardFacts } from './finding';

/** Every detector, in the order it runs (findings of equal share keep this order). */
export const FINDINGS = [
  death,
  stuck,
  backAndForth,
  turningFarmed,
  extremePitch,
  timeoutTargetUnseen,
  toolWornOut,
  attacksUnbreakable,
  targetProgress,
  rewardMisaligned,
  rewardGamed,
  unseenPay,
  rewardSign,
] as const satisfies readonly FindingRule[];

type Found<T> = T extends readonly (infer F)[] ? F : Exclude<T, undefined>;
/** A finding of any detector: its `kind` and its `patch` request are those of its detector. */
export type Finding = Found<ReturnType<(typeof FINDINGS)[number]['find']>>;
export type FindingKind = Finding['kind'];

/**
 * Every finding for a run's evaluation episodes, deaths first, then most widespread first. `rewarded` is false
 * for episodes rolled out without a reward (all zeros), where the reward's sign says nothing.
 */
export function findFailures(episodes: EpisodeRecord[], task: TaskSpec | undefined, rewarded = true, reward?: RewardFacts): Finding[] {
  const ctx: FindingContext = { episodes, failed: episodes.filter((ep) => !ep.success), task, reward };
  const out: Finding[] = [];
  for (const rule of FINDINGS) {
    if (rule.meta.needs.includes('failed') && ctx.failed.length === 0) continue;
    if (rule.meta.needs.includes('rewarded') && !rewarded) continue;
    const found = rule.find(ctx);
    if (Array.isArray(found)) out.push(...found);
    else if (found) out.push(found);
  }
  // Deaths first (the worst outcome, and what the paper's analyzer leads with), then by how widespread.
  const rank = (f: Finding) => (f.kind === 'death' ? 1 : 0);
  return out.sort((a, b) => rank(b) - rank(a) || b.share - a.share);
}
