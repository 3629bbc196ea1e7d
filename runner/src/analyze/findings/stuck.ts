// Standing still for most of a failed episode (shuffling back and forth on the spot counts as still), and
// whether the reward kept paying meanwhile: the patch makes not moving over a window cost.
import { GAME_FACTS } from '../../schema';
import type { EpisodeRecord } from '../../records';
import {
  defineFinding,
  actionSummary,
  fmt,
  KEEP_EVIDENCE,
  pathStep,
  pct,
  plural,
  range,
  rewardSummary,
  within,
  type EpisodeEvidence,
  type FindingOf,
} from '../finding';
import { addConstant, definePatch, ensureParameters, insertAtTop, yieldDense } from '../patch';
import * as py from '../python-patch';

/** Dense −1 when the agent moved less than `radius` m over the last `window` steps. */
export interface StuckPenaltyRequest {
  kind: 'stuck-penalty';
  window: number;
  radius: number;
  why: string;
}

const STUCK_RADIUS = 0.5; // m: within this of the window's first position counts as not moving
const STUCK_MIN_STEPS = 40; // at 0.2 m/step a walking agent covers 8 m in this time
const STUCK_MAX_SPEED = 0.25 * GAME_FACTS.walkPerStep; // m/step of path length: faster is moving, even if back and forth

function stuckFinding(failed: EpisodeRecord[]): FindingOf<'stuck', StuckPenaltyRequest> | undefined {
  const evidence: EpisodeEvidence[] = [];
  let affected = 0;
  let paidWhileStuck = 0;
  let stuckSteps = 0;
  let totalSteps = 0;
  for (const ep of failed) {
    totalSteps += ep.steps;
    const windows: [number, number][] = [];
    let anchor = 0;
    let travelled = 0; // path length since the anchor: shuffling back and forth is not standing still
    for (let i = 1; i <= ep.path.length; i++) {
      const a = ep.path[anchor]!;
      const p = ep.path[i];
      const q = ep.path[i - 1]!;
      if (p) travelled += Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
      const away = !p || Math.hypot(p[0] - a[0], p[1] - a[1], p[2] - a[2]) > STUCK_RADIUS;
      if (away) {
        if (i - anchor >= STUCK_MIN_STEPS && travelled < STUCK_MAX_SPEED * (i - anchor)) windows.push([Math.max(1, pathStep(ep, anchor)), pathStep(ep, i - 1)]);
        anchor = i;
        travelled = 0;
      }
    }
    const still = windows.reduce((n, w) => n + w[1] - w[0] + 1, 0);
    if (still < Math.max(STUCK_MIN_STEPS, 0.3 * ep.steps)) continue;
    affected++;
    stuckSteps += still;
    const last = windows[windows.length - 1]!;
    const recorded = ep.lastSteps.filter((s) => within(s, last));
    const notes = [
      `no movement beyond ${STUCK_RADIUS} m for ${still} of ${ep.steps} steps (${windows.map(range).slice(0, 3).join(', ')}${windows.length > 3 ? ', …' : ''})`,
    ];
    if (recorded.length > 0) {
      const yaws = recorded.map((s) => s.position[3]);
      const turned = yaws.slice(1).reduce((t, y, i) => t + Math.abs(y - yaws[i]!), 0);
      const r = rewardSummary(recorded);
      if (r.positive > 0) paidWhileStuck++;
      notes.push(
        `recorded ${range([recorded[0]!.step, recorded[recorded.length - 1]!.step])}: ${actionSummary(recorded)}${turned >= 180 ? `, turned ${fmt(turned, 0)}° in place` : ''}; ${r.text}`,
      );
    }
    evidence.push({ episode: ep.episode, seed: ep.seed, steps: last, note: notes.join('; ') });
  }
  if (affected === 0) return undefined;
  const share = affected / failed.length;
  const message = `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) spent most of their time without moving (${pct(stuckSteps / Math.max(1, totalSteps))} of all failed-episode steps)${paidWhileStuck > 0 ? `; in ${paidWhileStuck} of them the reward was still positive while standing still` : ''}.`;
  return {
    id: 'stuck',
    kind: 'stuck',
    share,
    message,
    suggestion: `Make standing still cost: dense −1 when the agent moved less than ${STUCK_RADIUS} m over the last 20 steps${paidWhileStuck > 0 ? ', and find what pays while it stands (turning in place towards a target is a common one)' : ''}.`,
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    patch: {
      kind: 'stuck-penalty',
      window: 20,
      radius: STUCK_RADIUS,
      why: `${pct(share)} of failed episodes stood still for most of the episode; moving less than STUCK_RADIUS over the window costs.`,
    },
  };
}

export const stuckPenalty = definePatch<StuckPenaltyRequest>({
  kind: 'stuck-penalty',
  write(src, term, req, edits) {
    ensureParameters(src, term, ['past_agent_positions'], edits);
    const window = addConstant(src, 'STUCK_WINDOW_STEPS', req.window, 'steps over which the agent must move (added by the analyzer)');
    const radius = addConstant(src, 'STUCK_RADIUS', req.radius, 'metres: moving less than this over the window costs (added by the analyzer)');
    const [x0, z0, x1, z1] = ['stuck_x0', 'stuck_z0', 'stuck_x1', 'stuck_z1'].map((n) => src.fresh(n));
    insertAtTop(
      src,
      term,
      [
        `// Analyzer: ${req.why}`,
        `if (past_agent_positions.length > ${window}) {`,
        `\tconst [${x0}, , ${z0}] = past_agent_positions[past_agent_positions.length - 1 - ${window}];`,
        `\tconst [${x1}, , ${z1}] = past_agent_positions[past_agent_positions.length - 1];`,
        `\tif (Math.hypot(${x1} - ${x0}, ${z1} - ${z0}) < ${radius}) ${yieldDense(term, -1)}`,
        '}',
      ],
      edits,
    );
  },
  python(src, term, req, edits) {
    py.ensureParameters(term, ['past_agent_positions'], edits);
    const window = py.addConstant(src, 'STUCK_WINDOW_STEPS', req.window, 'steps over which the agent must move (added by the analyzer)');
    const radius = py.addConstant(src, 'STUCK_RADIUS', req.radius, 'metres: moving less than this over the window costs (added by the analyzer)');
    const [then, now] = ['stuck_then', 'stuck_now'].map((n) => src.fresh(n));
    py.insertAtTop(
      src,
      term,
      [
        `# Analyzer: ${req.why}`,
        `if len(past_agent_positions) > ${window}:`,
        `\t${then} = past_agent_positions[-1 - ${window}]`,
        `\t${now} = past_agent_positions[-1]`,
        `\tif ((${now}[0] - ${then}[0]) ** 2 + (${now}[2] - ${then}[2]) ** 2) ** 0.5 < ${radius}:`,
        `\t\t${py.yieldDense(term, -1)}`,
      ],
      edits,
    );
  },
});

export const stuck = defineFinding({
  meta: {
    id: 'stuck',
    kinds: ['stuck'],
    description: 'failed episodes that spent most of their steps without moving',
    needs: ['failed'],
  },
  find: (ctx) => stuckFinding(ctx.failed),
  patch: stuckPenalty,
});
