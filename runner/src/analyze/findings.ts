// Failure patterns in a run's evaluation episodes, found without an LLM: deaths by cause (and whether the
// hazard was in view), standing still, back-and-forth motion that farms the dense reward, pitch held at an
// extreme, time-outs that never saw the target, and a reward whose sign never changes. Each finding carries
// its evidence (episodes and step ranges) and, where the fix is code, the patch to ask for.
import minecraftData from 'minecraft-data';
import { DEFAULT_GAME_VERSION, GAME_FACTS, SCALE_RULE } from '../schema';
import type { TaskSpec } from '../tasks';
import type { EpisodeRecord, RecordedStep } from '../records';
import type { PatchRequest } from './patches';
import { worldCanHold } from '../env/sim/worldgen';

export type FindingKind =
  | 'death'
  | 'stuck'
  | 'back-and-forth'
  | 'turning-farmed'
  | 'extreme-pitch'
  | 'timeout-target-unseen'
  | 'reward-never-positive'
  | 'reward-always-positive'
  | 'target-not-approached'
  | 'target-lost'
  | 'reward-misaligned'
  | 'reward-gamed';

export interface EpisodeEvidence {
  episode: number;
  seed: number;
  /** 1-based inclusive step range within the episode the evidence is about. */
  steps?: [number, number];
  note: string;
}

export interface Finding {
  /** Stable id: kind plus qualifier (`death-lava`). */
  id: string;
  kind: FindingKind;
  /** Episodes affected out of those examined, 0..1; findings are ranked by it. */
  share: number;
  /** What happened, in one or two sentences with numbers. */
  message: string;
  /** What to change. */
  suggestion: string;
  /** Evidence for the first few episodes (the paper's K). */
  evidence: EpisodeEvidence[];
  /** Every failed episode the finding explains (coverage counts these). */
  episodeIds: number[];
  /** The reward change that addresses it, when it is code. */
  patch?: PatchRequest;
  /** Why a finding has no patch when none is safe (set by the finding, not by the patcher). */
  noPatch?: string;
}

/** What the analyzer knows about the reward beyond the recorded steps. */
export interface RewardFacts {
  /** Names of blocks and mobs the reward file reads (string literals and property names). */
  names: ReadonlySet<string>;
  /** The reward's values on failed episodes' recorded steps, by episode id: re-run in the sandbox (rerun.ts) or as recorded. */
  rerun?: ReadonlyMap<number, RerunStep[]>;
  /**
   * Where `rerun` came from: 'sandbox', the reward file re-run on the recorded observations (after training);
   * 'recorded', the rewards the agent received while training (the live analysis). The findings say which.
   */
  rerunSource?: 'sandbox' | 'recorded';
  /**
   * When the reward analysed is not the one the episodes were recorded with (a re-analysis with another
   * reward file): each episode's return under it, re-run over its recorded last steps, by episode id. The
   * recorded returns are the other reward's and are then not compared.
   */
  returns?: ReadonlyMap<number, number>;
}

/** One recorded step re-run: the reward's value and its dense sign (decoded with the scale rule). */
export interface RerunStep {
  step: number;
  reward: number;
  dense: number;
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

/** Thresholds, in steps and metres, chosen from the game facts where they depend on them. */
const STUCK_RADIUS = 0.5; // m: within this of the window's first position counts as not moving
const STUCK_MIN_STEPS = 40; // at 0.2 m/step a walking agent covers 8 m in this time
const STUCK_MAX_SPEED = 0.25 * GAME_FACTS.walkPerStep; // m/step of path length: faster is moving, even if back and forth
const OSCILLATION_WINDOW = 32; // the paper's L: also the span of recorded rewards
const OSCILLATION_MAX_NET_RATIO = 0.25; // net displacement / path length below this is back-and-forth
const EXTREME_PITCH_DEG = GAME_FACTS.fovPitchDeg; // at ±30° the horizon sits on the edge of the ±30° field of view
const EXTREME_PITCH_MIN_STEPS = 16; // half the recorded steps
const PITCH_LIMIT_DEG = EXTREME_PITCH_DEG - GAME_FACTS.turnDeg; // the patch: one turn short of the flagged pitch is free
// Progress towards the target: its distance shrank by at least half a walking step.
const PROGRESS_PER_STEP = 0.5 * GAME_FACTS.walkPerStep;
const LOST_TAIL_STEPS = 8; // the target out of view for the last this many steps after being seen: lost
const KEEP_EVIDENCE = 10; // the paper's K

const fmt = (x: number, digits = 1) => x.toFixed(digits).replace(/\.0+$/, '');
const pct = (x: number) => `${Math.round(x * 100)} %`;
const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;
const range = (s: [number, number]) => (s[0] === s[1] ? `step ${s[0]}` : `steps ${s[0]}–${s[1]}`);

/** Step number of `path[i]`: the path may or may not include the reset position. */
function pathStep(ep: EpisodeRecord, i: number): number {
  const offset = ep.path.length - ep.steps; // 1 when path[0] is the reset position, 0 when path[0] is after step 1
  return i + 1 - Math.max(0, Math.min(1, offset));
}

/** The first `names` entry visible in a nearest dict, with its distance. */
function nearestOf(nearest: Record<string, [number, number, number]>, names: readonly string[]): { name: string; distance: number } | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const n of names) {
    const e = nearest[n];
    if (e && (!best || e[0] < best.distance)) best = { name: n, distance: e[0] };
  }
  return best;
}

/**
 * The names the task's success counts that its world can hold (approach-tree counts birch logs, but plains
 * grow oak only): what findings look for and what patches add to a reward. All of them if the world can hold
 * none (a task file's own world), rather than none.
 */
function targetNames(task: TaskSpec | undefined): string[] {
  if (!task) return [];
  const names = task.success.kind === 'near' ? task.success.names : [task.success.mob];
  const held = names.filter((n) => worldCanHold(task.world, n));
  return held.length > 0 ? held : names;
}

/** Runs of consecutive steps for which `test` holds, as [first, last] step numbers. */
function runs<T>(items: T[], stepOf: (i: number) => number, test: (x: T, i: number) => boolean): [number, number][] {
  const out: [number, number][] = [];
  let start = -1;
  items.forEach((x, i) => {
    if (test(x, i)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.push([stepOf(start), stepOf(i - 1)]);
      start = -1;
    }
  });
  if (start >= 0) out.push([stepOf(start), stepOf(items.length - 1)]);
  return out;
}

const within = (s: RecordedStep, r: [number, number]) => s.step >= r[0] && s.step <= r[1];

function actionSummary(steps: RecordedStep[]): string {
  const counts = new Map<string, number>();
  for (const s of steps) counts.set(s.action, (counts.get(s.action) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([a, n]) => `${a} ×${n}`)
    .join(', ');
}

function rewardSummary(steps: RecordedStep[]): { positive: number; negative: number; text: string } {
  const positive = steps.filter((s) => s.reward > 0).length;
  const negative = steps.filter((s) => s.reward < 0).length;
  return { positive, negative, text: `reward +${positive}/−${negative}/0×${steps.length - positive - negative}` };
}

function deathFindings(failed: EpisodeRecord[]): Finding[] {
  const byCause = new Map<string, EpisodeRecord[]>();
  for (const ep of failed) if (ep.died) byCause.set(ep.deathCause ?? 'other', [...(byCause.get(ep.deathCause ?? 'other') ?? []), ep]);
  const out: Finding[] = [];
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
    let patch: PatchRequest | undefined;
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

function stuckFinding(failed: EpisodeRecord[]): Finding | undefined {
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

function backAndForthFinding(failed: EpisodeRecord[]): Finding | undefined {
  const evidence: EpisodeEvidence[] = [];
  let affected = 0;
  let farmed = 0;
  for (const ep of failed) {
    const p = ep.path;
    const flagged: [number, number][] = [];
    for (let start = 0; start + OSCILLATION_WINDOW < p.length; start += OSCILLATION_WINDOW / 2) {
      const end = start + OSCILLATION_WINDOW;
      let length = 0;
      let reversals = 0;
      let prev: [number, number] | undefined;
      for (let i = start + 1; i <= end; i++) {
        const d: [number, number] = [p[i]![0] - p[i - 1]![0], p[i]![2] - p[i - 1]![2]];
        const len = Math.hypot(d[0], d[1]);
        if (len < 0.02) continue;
        length += len;
        if (prev && d[0] * prev[0] + d[1] * prev[1] < 0) reversals++;
        prev = d;
      }
      const net = Math.hypot(p[end]![0] - p[start]![0], p[end]![2] - p[start]![2]);
      // Moving (at least a quarter of walking pace) with several reversals and little net progress.
      if (length >= OSCILLATION_WINDOW * GAME_FACTS.walkPerStep * 0.25 && reversals >= 4 && net < OSCILLATION_MAX_NET_RATIO * length) {
        const w: [number, number] = [Math.max(1, pathStep(ep, start)), pathStep(ep, end)];
        const lastW = flagged[flagged.length - 1];
        if (lastW && w[0] <= lastW[1]) lastW[1] = w[1];
        else flagged.push(w);
      }
    }
    if (flagged.length === 0) continue;
    const covered = flagged.reduce((n, w) => n + w[1] - w[0] + 1, 0);
    if (covered < 0.25 * ep.steps) continue;
    affected++;
    const notes = [
      `back-and-forth over ${covered} of ${ep.steps} steps (${flagged.map(range).slice(0, 3).join(', ')}${flagged.length > 3 ? ', …' : ''}), net ${fmt(ep.distanceMoved)} m from the start`,
    ];
    const recorded = ep.lastSteps.filter((s) => flagged.some((w) => within(s, w)));
    if (recorded.length > 0) {
      const r = rewardSummary(recorded);
      if (r.positive >= Math.max(2, 0.25 * recorded.length) && r.positive > r.negative) farmed++;
      notes.push(`recorded ${range([recorded[0]!.step, recorded[recorded.length - 1]!.step])}: ${actionSummary(recorded)}; ${r.text}`);
    }
    evidence.push({ episode: ep.episode, seed: ep.seed, steps: flagged[flagged.length - 1], note: notes.join('; ') });
  }
  if (affected === 0) return undefined;
  const share = affected / failed.length;
  const message = `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) walked back and forth with no net progress${farmed > 0 ? `, and in ${farmed} of them the reward paid more often than it cost during the oscillation: the dense term is being farmed` : ''}.`;
  return {
    id: 'back-and-forth',
    kind: 'back-and-forth',
    share,
    message,
    suggestion:
      'Pay for progress that cannot be undone and redone: replace a bonus for moving with a bonus for entering a cell not visited before in this episode (a Set kept in GLOBAL_DATA), and make any "closer" bonus symmetric with a "further" penalty.',
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    patch: {
      kind: 'movement-to-cells',
      cellSize: 2,
      why: `${pct(share)} of failed episodes walked back and forth collecting the movement bonus; only the first visit to a cell pays now.`,
    },
  };
}

/** Turning on the spot while the reward pays: a "turned towards the target" bonus without the matching penalty. */
function turningFarmFinding(failed: EpisodeRecord[]): Finding | undefined {
  const evidence: EpisodeEvidence[] = [];
  let affected = 0;
  for (const ep of failed) {
    const steps = ep.lastSteps;
    const inPlace = steps.filter((s, i) => {
      const prev = steps[i - 1];
      return (
        (s.action === 'turn_left' || s.action === 'turn_right') &&
        !!prev &&
        Math.hypot(s.position[0] - prev.position[0], s.position[2] - prev.position[2]) < 0.05
      );
    });
    const paid = inPlace.filter((s) => s.reward > 0);
    if (inPlace.length < 8 || paid.length < 0.25 * inPlace.length || paid.length < 3) continue;
    affected++;
    const seen = [...new Set(paid.flatMap((s) => Object.keys(s.nearest)))].slice(0, 4);
    evidence.push({
      episode: ep.episode,
      seed: ep.seed,
      steps: [inPlace[0]!.step, inPlace[inPlace.length - 1]!.step],
      note: `turned on the spot on ${inPlace.length} of the last ${steps.length} steps and the reward was positive on ${paid.length} of them (in view then: ${seen.join(', ') || 'nothing'})`,
    });
  }
  if (affected === 0) return undefined;
  const share = affected / failed.length;
  return {
    id: 'turning-farmed',
    kind: 'turning-farmed',
    share,
    message: `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) turned on the spot and were paid for it: each sweep past the target earns the "turned towards it" bonus, and nothing costs on the way round.`,
    suggestion:
      'Make the turning rule symmetric: penalise turning away from the target (its |yaw| growing) as much as turning towards it pays, so spinning nets zero.',
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    patch: { kind: 'symmetric-turning', why: `${pct(share)} of failed episodes spun on the spot collecting the turning bonus` },
  };
}

function extremePitchFinding(failed: EpisodeRecord[]): Finding | undefined {
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

function timeoutFinding(failed: EpisodeRecord[], task: TaskSpec | undefined): Finding | undefined {
  const targets = targetNames(task);
  if (targets.length === 0) return undefined;
  const evidence: EpisodeEvidence[] = [];
  let affected = 0;
  let cellsTotal = 0;
  for (const ep of failed) {
    if (!ep.truncated || ep.died) continue;
    if (ep.lastSteps.some((s) => nearestOf(s.nearest, targets)) || nearestOf(ep.final.nearest, targets)) continue;
    affected++;
    const cells = new Set(ep.path.map((q) => `${Math.floor(q[0] / 4)},${Math.floor(q[2] / 4)}`));
    cellsTotal += cells.size;
    const first = ep.lastSteps[0]?.step ?? 1;
    evidence.push({
      episode: ep.episode,
      seed: ep.seed,
      steps: [first, ep.steps],
      note: `timed out after ${ep.steps} steps; no ${targets.join('/')} in view in the last ${ep.lastSteps.length} steps; ${fmt(ep.distanceMoved)} m from the start, ${cells.size} distinct 4 m cells visited`,
    });
  }
  if (affected === 0) return undefined;
  const share = affected / failed.length;
  const meanCells = cellsTotal / affected;
  return {
    id: 'timeout-target-unseen',
    kind: 'timeout-target-unseen',
    share,
    message: `${plural(affected, 'failed episode')} of ${failed.length} (${pct(share)}) ran out of time without the target (${targets.join('/')}) in view at the end; they visited ${fmt(meanCells, 0)} distinct 4 m cells on average.`,
    suggestion:
      'The agent does not search: when the target is not in view, pay the first visit to each cell (a Set of visited cells in GLOBAL_DATA), so that covering new ground is rewarded and revisiting is not.',
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    patch: {
      kind: 'exploration-bonus',
      cellSize: 4,
      targets,
      why: `${pct(share)} of failed episodes timed out without ever seeing the target; the first visit to each cell pays when nothing else does.`,
    },
  };
}

function rewardSignFinding(episodes: EpisodeRecord[]): Finding | undefined {
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

/** The nearest target's distance at each recorded step (undefined when none is in view), then at the end. */
function targetSeries(ep: EpisodeRecord, targets: readonly string[]): { step: number; d: number | undefined }[] {
  const out = ep.lastSteps.map((st) => ({ step: st.step, d: nearestOf(st.nearest, targets)?.distance }));
  return out;
}

/**
 * Episodes that saw the target and did not get to it: not approached (its distance shrank at less than half
 * walking pace over the recorded steps) or lost (in view, then out of view for the last steps).
 */
function targetFindings(failed: EpisodeRecord[], task: TaskSpec | undefined): Finding[] {
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
  const out: Finding[] = [];
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

/** The reward ignores names the task's success counts: failed episodes in which only an ignored target was in view. */
function misalignmentFinding(failed: EpisodeRecord[], task: TaskSpec | undefined, reward: RewardFacts | undefined): Finding | undefined {
  const targets = targetNames(task);
  if (!reward || targets.length === 0) return undefined;
  const known = targets.filter((t) => reward.names.has(t));
  const ignored = targets.filter((t) => !reward.names.has(t));
  if (ignored.length === 0) return undefined;
  const evidence: EpisodeEvidence[] = [];
  for (const ep of failed) {
    const steps = ep.lastSteps.filter(
      (st) =>
        nearestOf(st.nearest, ignored) && (!nearestOf(st.nearest, known) || nearestOf(st.nearest, ignored)!.distance < nearestOf(st.nearest, known)!.distance),
    );
    if (steps.length === 0) continue;
    const d = steps.map((st) => nearestOf(st.nearest, ignored)!);
    const r = rewardSummary(steps);
    evidence.push({
      episode: ep.episode,
      seed: ep.seed,
      steps: [steps[0]!.step, steps[steps.length - 1]!.step],
      note: `${[...new Set(d.map((x) => x.name))].join('/')} nearer than any ${known.join('/') || 'name the reward reads'} on ${steps.length} of the last ${ep.lastSteps.length} steps (closest ${fmt(Math.min(...d.map((x) => x.distance)))} m); the reward there: ${r.text}`,
    });
  }
  const share = evidence.length / failed.length;
  const criterion = task?.description.success_criteria ?? `success counts ${targets.join(', ')}`;
  return {
    id: 'reward-misaligned',
    kind: 'reward-misaligned',
    share,
    message: `The task's success counts ${targets.join(', ')} ("${criterion}"), but the reward reads only ${known.join(', ') || 'none of them'}: ${ignored.join(', ')} ${ignored.length === 1 ? 'is' : 'are'} invisible to it. ${evidence.length > 0 ? `In ${plural(evidence.length, 'failed episode')} of ${failed.length} (${pct(share)}) the nearest target in view was one the reward ignores.` : 'No failed episode had an ignored target nearest in its last steps.'}`,
    suggestion: `Read every name the task's success counts: take the nearest of ${targets.join(', ')} wherever the reward reads ${known.join(' or ') || 'a target'}.`,
    evidence: evidence.slice(0, KEEP_EVIDENCE),
    episodeIds: evidence.map((e) => e.episode),
    ...(known.length > 0
      ? {
          patch: {
            kind: 'target-names' as const,
            known,
            targets,
            why: `the task's success counts ${targets.join(', ')}; the reward read only ${known.join(', ')}.`,
          },
        }
      : { noPatch: `the reward reads none of the task's targets (${targets.join(', ')}); there is no read to widen — the approach patch adds one` }),
  };
}

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
function gamedFinding(episodes: EpisodeRecord[], task: TaskSpec | undefined, reward: RewardFacts | undefined): Finding | undefined {
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

/**
 * Every finding for a run's evaluation episodes, deaths first, then most widespread first. `rewarded` is false
 * for episodes rolled out without a reward (all zeros), where the reward's sign says nothing.
 */
export function findFailures(episodes: EpisodeRecord[], task: TaskSpec | undefined, rewarded = true, reward?: RewardFacts): Finding[] {
  const failed = episodes.filter((ep) => !ep.success);
  const out: Finding[] = [];
  if (failed.length > 0) {
    out.push(...deathFindings(failed));
    for (const f of [stuckFinding(failed), backAndForthFinding(failed), turningFarmFinding(failed), extremePitchFinding(failed), timeoutFinding(failed, task)])
      if (f) out.push(f);
    out.push(...targetFindings(failed, task));
    if (rewarded) for (const f of [misalignmentFinding(failed, task, reward), gamedFinding(episodes, task, reward)]) if (f) out.push(f);
  }
  const sign = rewarded ? rewardSignFinding(episodes) : undefined;
  if (sign) out.push(sign);
  // Deaths first (the worst outcome, and what the paper's analyzer leads with), then by how widespread.
  const rank = (f: Finding) => (f.kind === 'death' ? 1 : 0);
  return out.sort((a, b) => rank(b) - rank(a) || b.share - a.share);
}
