// Deaths by cause, and whether the hazard was in view before them: a hazard seen coming is one the reward can
// teach the agent to keep away from, so lava, fire and hostile mobs seen before dying get a penalty patch.
import minecraftData from 'minecraft-data';
import { DEFAULT_GAME_VERSION } from '../../schema';
import type { EpisodeRecord } from '../../records';
import {
  actionSummary,
  defineFinding,
  EXTREME_PITCH_DEG,
  fmt,
  KEEP_EVIDENCE,
  nearestOf,
  pct,
  plural,
  range,
  runs,
  type EpisodeEvidence,
  type FindingOf,
} from '../finding';
import { addConstant, definePatch, ensureParameters, insertAtTop, yieldDense } from '../patch';
import * as py from '../python-patch';

/** Dense −1 while one of `names` is in view closer than `distance` m. */
export interface HazardPenaltyRequest {
  kind: 'hazard-penalty';
  names: string[];
  distance: number;
  why: string;
  /** Names the constants (`MOB` → MOB_PENALTY_DISTANCE); default: the single name. */
  label?: string;
}

/** Hazard names in the nearest-blocks dict per death cause; mobs come from minecraft-data's hostile category. */
const HOSTILE_MOBS: readonly string[] = (() => {
  const data = minecraftData(DEFAULT_GAME_VERSION);
  return data.entitiesArray.filter((e) => e.category === 'Hostile mobs').map((e) => e.name);
})();
const HAZARDS: Record<string, readonly string[]> = {
  lava: ['lava'],
  fire: ['fire', 'lava'],
  drowning: ['water'],
  mob: HOSTILE_MOBS,
};

function deathFindings(failed: EpisodeRecord[]): FindingOf<'death', HazardPenaltyRequest>[] {
  const byCause = new Map<string, EpisodeRecord[]>();
  for (const ep of failed) if (ep.died) byCause.set(ep.deathCause ?? 'other', [...(byCause.get(ep.deathCause ?? 'other') ?? []), ep]);
  const out: FindingOf<'death', HazardPenaltyRequest>[] = [];
  for (const [cause, eps] of byCause) {
    const hazards = HAZARDS[cause] ?? [];
    const evidence: EpisodeEvidence[] = [];
    let inView = 0;
    const lastDistances: number[] = []; // hazard distance in the last steps before each death it was seen in
    const seenNames = new Set<string>();
    const falls: number[] = [];
    const pitchedAway: number[] = [];
    for (const ep of eps) {
      const steps = ep.lastSteps;
      const sightings = steps.map((s) => nearestOf(s.nearest, hazards));
      const finalSight = nearestOf(ep.final.nearest, hazards);
      const seenRuns = runs(
        sightings,
        (i) => steps[i]!.step,
        (x) => !!x,
      );
      const notes: string[] = [`died of ${cause} at step ${ep.steps}`];
      let span: [number, number] = [steps[0]?.step ?? ep.steps, ep.steps];
      if (hazards.length > 0) {
        const seen = sightings.map((x, i) => ({ x, step: steps[i]!.step })).filter((v) => !!v.x);
        if (seen.length > 0 || finalSight) {
          inView++;
          const first = seen[0] ?? { x: finalSight, step: ep.steps };
          const closest = Math.min(...seen.map((v) => v.x!.distance), finalSight?.distance ?? Infinity);
          for (const v of seen) seenNames.add(v.x!.name);
          if (finalSight) seenNames.add(finalSight.name);
          const tail = seen.filter((v) => v.step > ep.steps - 10).map((v) => v.x!.distance);
          lastDistances.push(...(tail.length > 0 ? tail : [first.x!.distance]));
          notes.push(
            `${[...new Set(seen.map((v) => v.x!.name))].join('/') || finalSight!.name} in view at ${seenRuns.map(range).join(', ') || `step ${ep.steps}`} (first at ${fmt(first.x!.distance)} m, closest ${fmt(closest)} m)`,
          );
          span = [first.step, ep.steps];
        } else {
          notes.push(`no ${hazards.length > 3 ? 'hostile mob' : hazards.join('/')} in view in the last ${steps.length} steps`);
          const pitches = steps.slice(-10).map((s) => Math.abs(s.position[4]));
          if (pitches.length > 0 && Math.min(...pitches) >= EXTREME_PITCH_DEG) pitchedAway.push(ep.episode);
        }
      }
      if (cause === 'fall' && steps.length > 0) {
        const top = Math.max(...steps.map((s) => s.position[1]));
        const drop = top - steps[steps.length - 1]!.position[1];
        falls.push(drop);
        notes.push(`dropped ${fmt(drop)} m in the last ${steps.length} steps`);
      }
      if (ep.final.blockUnderFoot) notes.push(`on ${ep.final.blockUnderFoot}`);
      notes.push(`last actions ${actionSummary(steps.slice(-8))}`);
      evidence.push({ episode: ep.episode, seed: ep.seed, steps: span, note: notes.join('; ') });
    }
    const share = eps.length / failed.length;
    let message = `${plural(eps.length, 'failed episode')} of ${failed.length} (${pct(share)}) ended in death by ${cause}`;
    if (hazards.length > 0) message += `; the ${cause === 'mob' ? 'hostile mob' : hazards[0]} was in view before death in ${inView} of them`;
    if (pitchedAway.length > 0)
      message += `; ${plural(pitchedAway.length, 'agent')} looked steeply up or down (|pitch| ≥ ${EXTREME_PITCH_DEG}°) before dying, where the hazard could not be seen`;
    message += '.';
    let suggestion: string;
    let patch: HazardPenaltyRequest | undefined;
    const sorted = [...lastDistances].sort((a, b) => a - b);
    const q75 = sorted[Math.floor(sorted.length * 0.75)] ?? 4;
    const distance = Math.min(8, Math.max(3, Math.ceil(q75)));
    if (cause === 'lava' || cause === 'fire') {
      // Burning to death mostly follows stepping into lava; only fire blocks seen without lava point at fire.
      const hazard = cause === 'fire' && seenNames.has('fire') && !seenNames.has('lava') ? 'fire' : 'lava';
      suggestion = `Penalise ${hazard} in view: make the dense term −1 whenever ${hazard} is visible closer than ${distance} m (the distance it was seen at in the last steps before most deaths), before any other shaping; dying is already the end of the episode, so the warning has to come earlier.`;
      patch = {
        kind: 'hazard-penalty',
        names: [hazard],
        distance,
        why: `${pct(share)} of failed episodes died ${cause === 'lava' ? 'in lava' : 'burning'}, most with ${hazard} in view beforehand; ${hazard} in view closer than this costs.`,
      };
    } else if (cause === 'mob') {
      const names = HOSTILE_MOBS.filter((m) => seenNames.has(m));
      suggestion =
        names.length > 0
          ? `Penalise hostile mobs in view (${names.join(', ')}) closer than ${distance} m, so the agent learns to keep away or turn and fight.`
          : 'The mobs that killed the agent were never in view: it was attacked from behind. Reward turning to face nearby threats, or penalise losing health in the dense term.';
      if (names.length > 0)
        patch = {
          kind: 'hazard-penalty',
          names,
          distance,
          label: 'mob',
          why: `${pct(share)} of failed episodes were killed by ${names.join('/')} it had in view; hostile mobs in view closer than this cost.`,
        };
    } else if (cause === 'fall') {
      const worst = Math.max(0, ...falls);
      suggestion = `Agents fell to death (drops up to ${fmt(worst)} m). Penalise a drop in y between consecutive past_agent_positions of more than 1 m, and reward keeping the view level so edges are visible.`;
    } else if (cause === 'drowning') {
      suggestion =
        'Agents drowned. Penalise staying in water (its y not rising while water is in view at distance < 1 m) and reward surfacing, e.g. jumping while in water.';
    } else {
      suggestion = `Agents died (${cause}). Make losing health a −1 sparse event so the agent learns what hurts it.`;
    }
    const noPatch =
      cause === 'mob'
        ? 'the mobs that killed the agent were never in view, so there is no name to penalise; turning to face threats is a behaviour, not a one-line reward change'
        : cause === 'fall'
          ? 'a safe drop penalty depends on the terrain (jumping down one block is fine); the right threshold is a design choice left to you'
          : cause === 'drowning'
            ? 'water is often safe to cross; penalising it in view would also stop the agent from crossing rivers towards the target'
            : `the death cause (${cause}) names no block or mob the reward could read`;
    out.push({
      id: `death-${cause}`,
      kind: 'death',
      share,
      message,
      suggestion,
      evidence: evidence.slice(0, KEEP_EVIDENCE),
      episodeIds: evidence.map((e) => e.episode),
      ...(patch ? { patch } : { noPatch }),
    });
  }
  return out;
}

export const hazardPenalty = definePatch<HazardPenaltyRequest>({
  kind: 'hazard-penalty',
  write(src, term, req, edits) {
    ensureParameters(src, term, ['current_nearest_blocks'], edits);
    const label = req.label ?? (req.names.length === 1 ? req.names[0]! : 'hazard');
    const limit = addConstant(
      src,
      `${label.toUpperCase()}_PENALTY_DISTANCE`,
      req.distance,
      `metres: ${req.names.join('/')} in view closer than this costs (added by the analyzer)`,
    );
    const lines = [`// Analyzer: ${req.why}`];
    if (req.names.length === 1) {
      const entry = src.fresh(`${label}_in_view`);
      lines.push(
        `const ${entry} = current_nearest_blocks[${src.quote(req.names[0]!)}];`,
        `if (${entry} !== undefined && ${entry}[0] < ${limit}) ${yieldDense(term, -1)}`,
      );
    } else {
      const names = src.fresh(`${label.toUpperCase()}_NAMES`);
      const each = src.fresh(label.toLowerCase());
      const entry = src.fresh(`${label.toLowerCase()}_in_view`);
      src.constants.push(`const ${names} = [${req.names.map((x) => src.quote(x)).join(', ')}]; // hazards seen before deaths (added by the analyzer)`);
      lines.push(
        `for (const ${each} of ${names}) {`,
        `\tconst ${entry} = current_nearest_blocks[${each}];`,
        `\tif (${entry} !== undefined && ${entry}[0] < ${limit}) ${yieldDense(term, -1)}`,
        '}',
      );
    }
    insertAtTop(src, term, lines, edits);
  },
  python(src, term, req, edits) {
    py.ensureParameters(term, ['current_nearest_blocks'], edits);
    const label = req.label ?? (req.names.length === 1 ? req.names[0]! : 'hazard');
    const limit = py.addConstant(
      src,
      `${label.toUpperCase()}_PENALTY_DISTANCE`,
      req.distance,
      `metres: ${req.names.join('/')} in view closer than this costs (added by the analyzer)`,
    );
    const entry = src.fresh(`${label.toLowerCase()}_in_view`);
    const test = [`if ${entry} is not None and ${entry}[0] < ${limit}:`, `\t${py.yieldDense(term, -1)}`];
    if (req.names.length === 1) {
      py.insertAtTop(src, term, [`# Analyzer: ${req.why}`, `${entry} = current_nearest_blocks.get(${src.quote(req.names[0]!)})`, ...test], edits);
      return;
    }
    const names = src.fresh(`${label.toUpperCase()}_NAMES`);
    const each = src.fresh(label.toLowerCase());
    src.constants.push(`${names} = [${req.names.map((x) => src.quote(x)).join(', ')}]  # hazards seen before deaths (added by the analyzer)`);
    const loop = [`for ${each} in ${names}:`, `\t${entry} = current_nearest_blocks.get(${each})`, ...test.map((l) => `\t${l}`)];
    py.insertAtTop(src, term, [`# Analyzer: ${req.why}`, ...loop], edits);
  },
});

export const death = defineFinding({
  meta: {
    id: 'death',
    kinds: ['death'],
    description: 'deaths by cause (death-lava, death-mob, …), with whether the hazard was in view before',
    needs: ['failed'],
  },
  find: (ctx) => deathFindings(ctx.failed),
  patch: hazardPenalty,
});
