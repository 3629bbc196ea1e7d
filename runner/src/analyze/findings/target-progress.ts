// Episodes that saw the target and did not get to it: not approached (its distance shrank at less than half
// walking pace) or lost (in view, then out of view for the last steps). The patch pays only a new closest
// distance to a target and makes losing sight of it cost; reward-gamed asks for the same patch.
import type { EpisodeRecord } from '../../records';
import type { TaskSpec } from '../../tasks';
import { GAME_FACTS } from '../../schema';
import {
  defineFinding,
  actionSummary,
  fmt,
  KEEP_EVIDENCE,
  pct,
  plural,
  PROGRESS_PER_STEP,
  rewardSummary,
  targetNames,
  targetSeries,
  type EpisodeEvidence,
  type FindingOf,
} from '../finding';
import {
  addConstant,
  definePatch,
  ensureParameters,
  insertAtTop,
  nearestTargetHelper,
  PatchUnavailable,
  yieldDense,
  type DenseTerm,
  type Edit,
  type RewardSource,
} from '../patch';
import * as py from '../python-patch';

/**
 * While a target is in view, pay only a new closest distance (by `step` m) this episode and make every other
 * step cost; losing sight of it costs. Approaching pays, dawdling near it and re-finding it do not.
 */
export interface ApproachRecordRequest {
  kind: 'approach-record';
  targets: string[];
  step: number;
  why: string;
}

const LOST_TAIL_STEPS = 8; // the target out of view for the last this many steps after being seen: lost

/**
 * Episodes that saw the target and did not get to it: not approached (its distance shrank at less than half
 * walking pace over the recorded steps) or lost (in view, then out of view for the last steps).
 */
function targetFindings(failed: EpisodeRecord[], task: TaskSpec | undefined): FindingOf<'target-not-approached' | 'target-lost', ApproachRecordRequest>[] {
  const targets = targetNames(task);
  if (targets.length === 0) return [];
  const slow: EpisodeEvidence[] = [];
  const lost: EpisodeEvidence[] = [];
  let paces = 0;
  for (const ep of failed) {
    if (ep.died) continue;
    const series = targetSeries(ep, targets);
    const seen = series.filter((x) => x.d !== undefined);
    if (seen.length === 0) continue;
    const first = seen[0]!,
      last = seen[seen.length - 1]!;
    const tail = series.slice(-LOST_TAIL_STEPS);
    if (tail.length === LOST_TAIL_STEPS && tail.every((x) => x.d === undefined)) {
      const closest = Math.min(...seen.map((x) => x.d!));
      lost.push({
        episode: ep.episode,
        seed: ep.seed,
        steps: [first.step, ep.steps],
        note: `${targets.join('/')} in view from step ${first.step} at ${fmt(first.d!)} m (closest ${fmt(closest)} m), out of view from step ${last.step + 1} to the end; last actions ${actionSummary(ep.lastSteps.slice(-LOST_TAIL_STEPS))}`,
      });
      continue;
    }
    const span = Math.max(1, last.step - first.step);
    const pace = (first.d! - last.d!) / span;
    if (pace >= PROGRESS_PER_STEP) continue;
    paces += pace;
    const r = rewardSummary(ep.lastSteps.filter((st) => st.step >= first.step));
    slow.push({
      episode: ep.episode,
      seed: ep.seed,
      steps: [first.step, last.step],
      note: `${targets.join('/')} in view on ${seen.length} of the last ${series.length} steps, ${fmt(first.d!)} m → ${fmt(last.d!)} m (${fmt(pace, 3)} m/step; walking is ${GAME_FACTS.walkPerStep}); pitch ${[...new Set(ep.lastSteps.map((st) => st.position[4]))].slice(0, 4).join('/')}°; ${actionSummary(ep.lastSteps)}; ${r.text}`,
    });
  }
  const out: FindingOf<'target-not-approached' | 'target-lost', ApproachRecordRequest>[] = [];
  if (slow.length > 0) {
    const share = slow.length / failed.length;
    out.push({
      id: 'target-not-approached',
      kind: 'target-not-approached',
      share,
      message: `${plural(slow.length, 'failed episode')} of ${failed.length} (${pct(share)}) had the target (${targets.join('/')}) in view and did not walk up to it: its distance ${paces >= 0 ? 'shrank' : 'grew'} by ${fmt(Math.abs(paces / slow.length), 3)} m per step on average, against a walking pace of ${GAME_FACTS.walkPerStep} m.`,
      suggestion:
        'Pay only for real progress: while a target is in view, +1 when it is closer than ever before in this episode (by a margin) and nothing on other steps; −1 for losing sight of it. A "+1 whenever closer" term pays for creeping and dawdling as much as for walking up.',
      evidence: slow.slice(0, KEEP_EVIDENCE),
      episodeIds: slow.map((e) => e.episode),
      patch: {
        kind: 'approach-record',
        targets,
        step: PROGRESS_PER_STEP,
        why: `${pct(share)} of failed episodes had a target in view and crept instead of walking up to it; only a new closest distance pays now.`,
      },
    });
  }
  if (lost.length > 0) {
    const share = lost.length / failed.length;
    out.push({
      id: 'target-lost',
      kind: 'target-lost',
      share,
      message: `${plural(lost.length, 'failed episode')} of ${failed.length} (${pct(share)}) saw the target (${targets.join('/')}) and lost it: out of view for the last ${LOST_TAIL_STEPS}+ steps (turned away or occluded).`,
      suggestion:
        'Make losing sight of the target cost (dense −1 when it was in view last step and is not now), and pay a new closest distance rather than each sighting.',
      evidence: lost.slice(0, KEEP_EVIDENCE),
      episodeIds: lost.map((e) => e.episode),
      patch: {
        kind: 'approach-record',
        targets,
        step: PROGRESS_PER_STEP,
        why: `${pct(share)} of failed episodes saw a target and lost it; losing sight costs now, and only a new closest distance pays.`,
      },
    });
  }
  return out;
}

/**
 * An earlier approach patch in the dense term (its record of the closest distance, read through the same
 * nearest-target helper) already pays only a new closest distance: a second one would train the same reward
 * again (measured: the loop spent an iteration on it), so there is no patch.
 */
function refuseSecondRecord(body: string, helper: string): void {
  if (body.includes(`${helper}(current_nearest_blocks)`) && /GLOBAL_DATA(\.|\[["'])closest_target(_\d+)?\b/.test(body))
    throw new PatchUnavailable('the dense term already pays only a new closest distance to the target (an earlier analyzer patch)');
}

function addApproachRecord(src: RewardSource, term: DenseTerm, req: ApproachRecordRequest, edits: Edit[]): void {
  if (req.targets.length === 0) throw new PatchUnavailable('the task names no target to approach');
  ensureParameters(src, term, ['current_nearest_blocks', 'previous_nearest_blocks', 'GLOBAL_DATA'], edits);
  const fn = nearestTargetHelper(src, req.targets);
  refuseSecondRecord((term.kind === 'function' ? term.fn.body : term.before.parent).getText(src.sf), fn);
  const step = addConstant(src, 'APPROACH_STEP', req.step, 'metres: a new closest distance by at least this pays (added by the analyzer)');
  const key = src.fresh('closest_target');
  const [now, before] = ['target_now', 'target_before'].map((n) => src.fresh(n));
  insertAtTop(
    src,
    term,
    [
      `// Analyzer: ${req.why}`,
      `const ${now} = ${fn}(current_nearest_blocks);`,
      `const ${before} = ${fn}(previous_nearest_blocks);`,
      `if (${now} === undefined && ${before} !== undefined) ${yieldDense(term, -1)} // lost sight of the target`,
      `if (${now} !== undefined) {`,
      `	if (!(${src.quote(key)} in GLOBAL_DATA)) {`,
      `		GLOBAL_DATA.${key} = ${now}[0];`,
      `		${yieldDense(term, 1)} // first sight of a target this episode`,
      `	} else if (${now}[0] < GLOBAL_DATA.${key} - ${step}) {`,
      `		GLOBAL_DATA.${key} = ${now}[0];`,
      `		${yieldDense(term, 1)} // closer than ever before this episode`,
      '	}',
      // No penalty for the other steps in view: a cost that only seeing the target incurs teaches the agent to
      // look away (measured: training success fell from the foundation's 42 % to 25 % of 122 episodes).
      `	${yieldDense(term, 0)} // no new progress: nothing to earn by approaching again`,
      '}',
    ],
    edits,
  );
}

/** addApproachRecord in Python. */
function pythonApproachRecord(src: py.PythonSource, term: py.PythonDenseTerm, req: ApproachRecordRequest, edits: Edit[]): void {
  if (req.targets.length === 0) throw new PatchUnavailable('the task names no target to approach');
  py.ensureParameters(term, ['current_nearest_blocks', 'previous_nearest_blocks', 'GLOBAL_DATA'], edits);
  const fn = py.nearestTargetHelper(src, req.targets);
  refuseSecondRecord(term.kind === 'function' ? term.def.text : term.before.parent!.text, fn);
  const step = py.addConstant(src, 'APPROACH_STEP', req.step, 'metres: a new closest distance by at least this pays (added by the analyzer)');
  const key = src.quote(src.fresh('closest_target'));
  const [now, before] = ['target_now', 'target_before'].map((n) => src.fresh(n));
  const pay = (v: number) => py.yieldDense(term, v);
  py.insertAtTop(
    src,
    term,
    [
      `# Analyzer: ${req.why}`,
      `${now} = ${fn}(current_nearest_blocks)`,
      `${before} = ${fn}(previous_nearest_blocks)`,
      `if ${now} is None and ${before} is not None:`,
      `\t${pay(-1)}  # lost sight of the target`,
      `if ${now} is not None:`,
      `\tif ${key} not in GLOBAL_DATA:`,
      `\t\tGLOBAL_DATA[${key}] = ${now}[0]`,
      `\t\t${pay(1)}  # first sight of a target this episode`,
      `\telif ${now}[0] < GLOBAL_DATA[${key}] - ${step}:`,
      `\t\tGLOBAL_DATA[${key}] = ${now}[0]`,
      `\t\t${pay(1)}  # closer than ever before this episode`,
      // No penalty for the other steps in view (addApproachRecord says why: the agent learns to look away).
      `\t${pay(0)}  # no new progress: nothing to earn by approaching again`,
    ],
    edits,
  );
}

export const approachRecord = definePatch<ApproachRecordRequest>({ kind: 'approach-record', write: addApproachRecord, python: pythonApproachRecord });

export const targetProgress = defineFinding({
  meta: {
    id: 'target-progress',
    kinds: ['target-not-approached', 'target-lost'],
    description: 'failed episodes that had the target in view and did not walk up to it, or lost sight of it',
    needs: ['failed'],
  },
  find: (ctx) => targetFindings(ctx.failed, ctx.task),
  patch: approachRecord,
});
