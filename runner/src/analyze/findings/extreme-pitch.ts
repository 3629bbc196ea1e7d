// The pitch held beyond the field of view's edge for long stretches (staring at the floor or the sky, where
// targets and hazards ahead are out of sight): the patch makes a steep pitch cost.
import { GAME_FACTS } from '../../schema';
import type { EpisodeRecord } from '../../records';
import { defineFinding, EXTREME_PITCH_DEG, fmt, KEEP_EVIDENCE, pct, plural, runs, within, type EpisodeEvidence, type FindingOf } from '../finding';
import { addConstant, definePatch, ensureParameters, insertAtTop, yieldDense } from '../patch';
import * as py from '../python-patch';

/** Dense −1 while |pitch| is beyond `degrees`. */
export interface PitchLimitRequest {
  kind: 'pitch-limit';
  degrees: number;
  why: string;
}

const EXTREME_PITCH_MIN_STEPS = 16; // half the recorded steps
const PITCH_LIMIT_DEG = EXTREME_PITCH_DEG - GAME_FACTS.turnDeg; // the patch: one turn short of the flagged pitch is free

function extremePitchFinding(failed: EpisodeRecord[]): FindingOf<'extreme-pitch', PitchLimitRequest> | undefined {
  const evidence: EpisodeEvidence[] = [];
  let affected = 0;
  let held = 0;
  let looked = 0;
  for (const ep of failed) {
    const steps = ep.lastSteps;
    const stretches = runs(
      steps,
      (i) => steps[i]!.step,
      (s) => Math.abs(s.position[4]) >= EXTREME_PITCH_DEG,
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
    message: `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) held the pitch beyond ±${EXTREME_PITCH_DEG}° for ${EXTREME_PITCH_MIN_STEPS}+ steps (${looked} looking down), ${fmt(held / affected, 0)} steps on average out of the last 32; with the ±${GAME_FACTS.fovPitchDeg}° field of view the horizon, targets and hazards ahead are out of sight.`,
    suggestion: `Constrain pitch: dense −1 while |pitch| exceeds ${PITCH_LIMIT_DEG}°, so the agent keeps the horizon and what is ahead of it in view.`,
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    patch: {
      kind: 'pitch-limit',
      degrees: PITCH_LIMIT_DEG,
      why: `${pct(share)} of failed episodes stared at the floor or sky for long stretches, hiding hazards and targets; a steep pitch costs.`,
    },
  };
}

export const pitchLimit = definePatch<PitchLimitRequest>({
  kind: 'pitch-limit',
  write(src, term, req, edits) {
    ensureParameters(src, term, ['past_agent_positions'], edits);
    const limit = addConstant(src, 'PITCH_LIMIT_DEGREES', req.degrees, 'looking further up or down than this costs (added by the analyzer)');
    const pitch = src.fresh('pitch_now');
    insertAtTop(
      src,
      term,
      [
        `// Analyzer: ${req.why}`,
        `const ${pitch} = past_agent_positions[past_agent_positions.length - 1][4];`,
        `if (Math.abs(${pitch}) > ${limit}) ${yieldDense(term, -1)}`,
      ],
      edits,
    );
  },
  python(src, term, req, edits) {
    py.ensureParameters(term, ['past_agent_positions'], edits);
    const limit = py.addConstant(src, 'PITCH_LIMIT_DEGREES', req.degrees, 'looking further up or down than this costs (added by the analyzer)');
    py.insertAtTop(src, term, [`# Analyzer: ${req.why}`, `if abs(past_agent_positions[-1][4]) > ${limit}:`, `\t${py.yieldDense(term, -1)}`], edits);
  },
});

export const extremePitch = defineFinding({
  meta: {
    id: 'extreme-pitch',
    kinds: ['extreme-pitch'],
    description: `failed episodes that held the pitch beyond ±${EXTREME_PITCH_DEG}° for long stretches`,
    needs: ['failed'],
  },
  find: (ctx) => extremePitchFinding(ctx.failed),
  patch: pitchLimit,
});
