// The pitch held beyond the field of view's edge for long stretches with no target in view (staring at the
// floor or the sky, where targets and hazards ahead are out of sight): the patch makes a steep pitch cost while
// no target is in view. With a target in view the pitch hides nothing, and policies that succeed do look down at
// it (trained approach-cow agents held the cow in view 30° or more below on about a third of their successful
// episodes' last steps): a limit that also held there cost those steps, and fine-tuning on it unlearnt them.
import { GAME_FACTS } from '../../schema';
import type { EpisodeRecord } from '../../records';
import type { TaskSpec } from '../../tasks';
import {
  defineFinding,
  EXTREME_PITCH_DEG,
  fmt,
  KEEP_EVIDENCE,
  nearestOf,
  pct,
  plural,
  runs,
  targetNames,
  within,
  type EpisodeEvidence,
  type FindingOf,
} from '../finding';
import { addConstant, definePatch, ensureParameters, insertAtTop, nearestTargetHelper, yieldDense } from '../patch';
import * as py from '../python-patch';

/** Dense −1 while |pitch| is beyond `degrees` and none of `targets` is in view (absent in older records: always). */
export interface PitchLimitRequest {
  kind: 'pitch-limit';
  degrees: number;
  targets?: string[];
  why: string;
}

const EXTREME_PITCH_MIN_STEPS = 16; // half the recorded steps
const PITCH_LIMIT_DEG = EXTREME_PITCH_DEG - GAME_FACTS.turnDeg; // the patch: one turn short of the flagged pitch is free

function extremePitchFinding(failed: EpisodeRecord[], task: TaskSpec | undefined): FindingOf<'extreme-pitch', PitchLimitRequest> | undefined {
  const targets = targetNames(task);
  const evidence: EpisodeEvidence[] = [];
  let affected = 0;
  let held = 0;
  let looked = 0;
  for (const ep of failed) {
    const steps = ep.lastSteps;
    const stretches = runs(
      steps,
      (i) => steps[i]!.step,
      (s) => Math.abs(s.position[4]) >= EXTREME_PITCH_DEG && !nearestOf(s.nearest, targets),
    ).filter((r) => r[1] - r[0] + 1 >= EXTREME_PITCH_MIN_STEPS);
    if (stretches.length === 0) continue;
    affected++;
    const longest = stretches.reduce((a, b) => (b[1] - b[0] > a[1] - a[0] ? b : a));
    const inside = steps.filter((s) => within(s, longest));
    const mean = inside.reduce((t, s) => t + s.position[4], 0) / inside.length;
    if (mean > 0) looked++;
    held += longest[1] - longest[0] + 1;
    const visible = new Set(inside.flatMap((s) => Object.keys(s.nearest)));
    evidence.push({
      episode: ep.episode,
      seed: ep.seed,
      steps: longest,
      note: `pitch ${fmt(mean, 0)}° (${mean > 0 ? 'down' : 'up'}) held for ${longest[1] - longest[0] + 1} of the last ${steps.length} steps; in view meanwhile: ${[...visible].slice(0, 4).join(', ') || 'nothing'}${ep.died ? `; died of ${ep.deathCause ?? 'unknown'}` : ''}`,
    });
  }
  if (affected === 0) return undefined;
  const share = affected / failed.length;
  return {
    id: 'extreme-pitch',
    kind: 'extreme-pitch',
    share,
    message: `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) held the pitch beyond ±${EXTREME_PITCH_DEG}° for ${EXTREME_PITCH_MIN_STEPS}+ steps${targets.length > 0 ? ` with no ${targets.join('/')} in view` : ''} (${looked} looking down), ${fmt(held / affected, 0)} steps on average out of the last 32; with the ±${GAME_FACTS.fovPitchDeg}° field of view the horizon, targets and hazards ahead are out of sight.`,
    suggestion: `Constrain pitch: dense −1 while |pitch| exceeds ${PITCH_LIMIT_DEG}°${targets.length > 0 ? ` and no ${targets.join('/')} is in view` : ''}, so the agent keeps the horizon and what is ahead of it in view.`,
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    patch: {
      kind: 'pitch-limit',
      degrees: PITCH_LIMIT_DEG,
      targets,
      why: `${pct(share)} of failed episodes stared at the floor or sky for long stretches, hiding hazards and targets; a steep pitch costs.`,
    },
  };
}

export const pitchLimit = definePatch<PitchLimitRequest>({
  kind: 'pitch-limit',
  write(src, term, req, edits) {
    const targets = req.targets ?? [];
    ensureParameters(src, term, targets.length > 0 ? ['past_agent_positions', 'current_nearest_blocks'] : ['past_agent_positions'], edits);
    const limit = addConstant(src, 'PITCH_LIMIT_DEGREES', req.degrees, 'looking further up or down than this costs (added by the analyzer)');
    const pitch = src.fresh('pitch_now');
    const unseen = targets.length > 0 ? ` && ${nearestTargetHelper(src, targets)}(current_nearest_blocks) === undefined` : '';
    insertAtTop(
      src,
      term,
      [
        `// Analyzer: ${req.why}`,
        `const ${pitch} = past_agent_positions[past_agent_positions.length - 1][4];`,
        `if (Math.abs(${pitch}) > ${limit}${unseen}) ${yieldDense(term, -1)}`,
      ],
      edits,
    );
  },
  python(src, term, req, edits) {
    const targets = req.targets ?? [];
    py.ensureParameters(term, targets.length > 0 ? ['past_agent_positions', 'current_nearest_blocks'] : ['past_agent_positions'], edits);
    const limit = py.addConstant(src, 'PITCH_LIMIT_DEGREES', req.degrees, 'looking further up or down than this costs (added by the analyzer)');
    const unseen = targets.length > 0 ? ` and ${py.nearestTargetHelper(src, targets)}(current_nearest_blocks) is None` : '';
    py.insertAtTop(src, term, [`# Analyzer: ${req.why}`, `if abs(past_agent_positions[-1][4]) > ${limit}${unseen}:`, `\t${py.yieldDense(term, -1)}`], edits);
  },
});

export const extremePitch = defineFinding({
  meta: {
    id: 'extreme-pitch',
    kinds: ['extreme-pitch'],
    description: `failed episodes that held the pitch beyond ±${EXTREME_PITCH_DEG}° for long stretches with no target in view`,
    needs: ['failed'],
  },
  find: (ctx) => extremePitchFinding(ctx.failed, ctx.task),
  patch: pitchLimit,
});
