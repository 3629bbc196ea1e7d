// Failed episodes that end attacking a block no tool breaks (minecraft-data: not diggable; underground that is
// bedrock, which 1.16.5 lays at y 0–4): the agent dug down until the floor of the world and hit it from then on.
// A reward that counts exploration in 3D cells pays a shaft down as much as a tunnel, and a shaft ends here;
// the evidence says how far below its start each agent went and when it first got that low. No patch: a cost
// on the way down alone, tried on explore-diamond, sent the fine-tuned agents up instead (staircases dug upwards,
// 1 % success where the foundation had 14 %); what held was paying new (x, z) columns with the feet kept in a
// band around the start height, up and down, which is a change to the reward's design, not a line to add.
import minecraftData from 'minecraft-data';
import type { EpisodeRecord } from '../../records';
import { DEFAULT_GAME_VERSION } from '../../schema';
import { defineFinding, fmt, KEEP_EVIDENCE, median, pathStep, pct, plural, type EpisodeEvidence, type FindingOf } from '../finding';

/** Solid blocks no tool breaks (fluids are not diggable either, but are not what an attack hits). */
const UNBREAKABLE: readonly string[] = minecraftData(DEFAULT_GAME_VERSION)
  .blocksArray.filter((b) => !b.diggable && b.boundingBox === 'block')
  .map((b) => b.name);
/** Close enough that the block is what the agent faces: within one block of the eyes' nearest point. */
const NEXT_TO = 1.5;

function attacksUnbreakableFinding(failed: EpisodeRecord[]): FindingOf<'attacks-unbreakable'> | undefined {
  const evidence: EpisodeEvidence[] = [];
  const depths: number[] = [];
  const reachedAt: number[] = [];
  const names = new Set<string>();
  for (const ep of failed) {
    const steps = ep.lastSteps;
    if (steps.length === 0) continue;
    let hits = 0;
    let hit: string | undefined;
    for (const s of steps) {
      if (s.action !== 'attack') continue;
      const name = UNBREAKABLE.find((n) => (s.nearest[n]?.[0] ?? Infinity) < NEXT_TO);
      if (name) {
        hits++;
        hit = name;
      }
    }
    // Most of the last steps spent on it: the end of the episode, not a swing in passing.
    if (hits * 2 < steps.length || !hit) continue;
    names.add(hit);
    const startY = ep.path[0]?.[1] ?? 0;
    const endY = ep.path[ep.path.length - 1]?.[1] ?? startY;
    const depth = startY - endY;
    // When it first got as low as it ended (within half a block).
    const low = ep.path.findIndex((q) => q[1] <= endY + 0.5);
    const at = low >= 0 ? pathStep(ep, low) : ep.steps;
    depths.push(depth);
    reachedAt.push(at);
    evidence.push({
      episode: ep.episode,
      seed: ep.seed,
      steps: [steps[0]!.step, ep.steps],
      note: `attacked ${hit} within ${NEXT_TO} m on ${hits} of the last ${steps.length} steps; feet at y ${fmt(endY)}, ${fmt(depth)} m below the start, first that low at step ${at}${ep.truncated ? `; timed out at step ${ep.steps}` : ''}`,
    });
  }
  if (evidence.length === 0) return undefined;
  const affected = evidence.length;
  const share = affected / failed.length;
  const what = [...names].join(', ');
  return {
    id: 'attacks-unbreakable',
    kind: 'attacks-unbreakable',
    share,
    message: `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) ended attacking ${what}, which no tool breaks (minecraft-data ${DEFAULT_GAME_VERSION}: not diggable), a median ${fmt(median(depths))} m below their start height, first reached at a median step ${fmt(median(reachedAt), 0)}.`,
    suggestion:
      'The agents dug down to the floor of the world and stayed there. Check what pays the way down: exploration counted in 3D cells pays a shaft as much as a tunnel, and a shaft ends here. Count new ground in (x, z) columns, and cost the feet leaving a band around the start height both ways: a cost on the way down alone sends the agent up instead.',
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    noPatch:
      "a cost on the way down alone sent fine-tuned explore-diamond agents up instead (1 % success); what to pay instead is a change to the reward's design",
  };
}

export const attacksUnbreakable = defineFinding({
  meta: {
    id: 'attacks-unbreakable',
    kinds: ['attacks-unbreakable'],
    description: 'failed episodes that end attacking a block no tool breaks (bedrock), with how far below the start they dug',
    needs: ['failed'],
  },
  find: (ctx) => attacksUnbreakableFinding(ctx.failed),
});
