// What an analyzer finding is. Each finding lives in its own file under findings/ (as the lint rules do): its
// meta, its detector over a run's evaluation episodes and, where the fix is code, the patch it asks for;
// findings.ts lists them. What several findings read in the episodes (the nearest of some names, runs of
// steps, the summaries their evidence quotes) is here, once.
import { percentText } from '../stats';
import { worldCanHold } from '../env/game/worldgen';
import { GAME_FACTS } from '../schema';
import { successTargets, type TaskSpec } from '../tasks';
import type { EpisodeRecord, RecordedStep } from '../records';
import type { PatchRequestBase, PatchWriter } from './patch';

export interface EpisodeEvidence {
  episode: number;
  seed: number;
  /** 1-based inclusive step range within the episode the evidence is about. */
  steps?: [number, number];
  note: string;
}

/** One finding: what happened, with its evidence, and the patch of kind `R` it asks for. */
export interface FindingOf<K extends string, R extends PatchRequestBase = never> {
  /** Stable id: kind plus qualifier (`death-lava`). */
  id: string;
  kind: K;
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
  patch?: R;
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

/** What every detector sees. */
export interface FindingContext {
  /** Every evaluation episode examined. */
  episodes: EpisodeRecord[];
  /** The failed ones: what the findings explain. */
  failed: EpisodeRecord[];
  task: TaskSpec | undefined;
  /** The reward file's facts; undefined without a reward file. */
  reward: RewardFacts | undefined;
}

export interface FindingMeta<K extends string> {
  /** The file's name: what it looks for. */
  id: string;
  /** The kinds of finding it reports (one detector may report several: reward-sign reports never and always positive). */
  kinds: readonly K[];
  /** What it finds, in one line. */
  description: string;
  /**
   * When it runs: 'failed', only when some episode failed (the findings explain failures); 'rewarded', only when
   * the episodes were rolled out with a reward (one without records zeros, whose sign says nothing).
   */
  needs: readonly ('failed' | 'rewarded')[];
}

/** A finding's detector, with the patch it writes when its fix is code (another finding may ask for it too). */
export interface FindingRule<K extends string = string, R extends PatchRequestBase = PatchRequestBase> {
  meta: FindingMeta<K>;
  /** The findings of this kind on the episodes: none, one, or one per qualifier (a death cause). */
  find(ctx: FindingContext): FindingOf<K, R>[] | FindingOf<K, R> | undefined;
  patch?: PatchWriter<R>;
}

/** Keeps the detector's literal kinds and its patch's request type, so findings.ts derives `Finding` from the detectors. */
export function defineFinding<const K extends string, R extends PatchRequestBase = never>(rule: FindingRule<K, R>): FindingRule<K, R> {
  return rule;
}

/** Thresholds shared by several findings, in steps and metres, from the game facts where they depend on them. */
export const EXTREME_PITCH_DEG = GAME_FACTS.fovPitchDeg; // at ±30° the horizon sits on the edge of the ±30° field of view
// Progress towards the target: its distance shrank by at least half a walking step.
export const PROGRESS_PER_STEP = 0.5 * GAME_FACTS.walkPerStep;
export const KEEP_EVIDENCE = 10; // the paper's K

/** How many distinct horizontal cells of `size` m an episode's path entered. */
export function cellsVisited(ep: EpisodeRecord, size: number): number {
  return new Set(ep.path.map((q) => `${Math.floor(q[0] / size)},${Math.floor(q[2] / size)}`)).size;
}

/** The median of a non-empty list. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
export const fmt = (x: number, digits = 1) => x.toFixed(digits).replace(/\.0+$/, '');
export const pct = (x: number) => percentText(x, 0);
export const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;
export const range = (s: [number, number]) => (s[0] === s[1] ? `step ${s[0]}` : `steps ${s[0]}–${s[1]}`);

/** Step number of `path[i]`: the path may or may not include the reset position. */
export function pathStep(ep: EpisodeRecord, i: number): number {
  const offset = ep.path.length - ep.steps; // 1 when path[0] is the reset position, 0 when path[0] is after step 1
  return i + 1 - Math.max(0, Math.min(1, offset));
}

/** The first `names` entry visible in a nearest dict, with its distance. */
export function nearestOf(nearest: Record<string, [number, number, number]>, names: readonly string[]): { name: string; distance: number } | undefined {
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
export function targetNames(task: TaskSpec | undefined): string[] {
  if (!task) return [];
  const names = successTargets(task);
  const held = names.filter((n) => worldCanHold(task.world, n));
  return held.length > 0 ? held : names;
}

/** Runs of consecutive steps for which `test` holds, as [first, last] step numbers. */
export function runs<T>(items: T[], stepOf: (i: number) => number, test: (x: T, i: number) => boolean): [number, number][] {
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

export const within = (s: RecordedStep, r: [number, number]) => s.step >= r[0] && s.step <= r[1];

export function actionSummary(steps: RecordedStep[]): string {
  const counts = new Map<string, number>();
  for (const s of steps) counts.set(s.action, (counts.get(s.action) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([a, n]) => `${a} ×${n}`)
    .join(', ');
}

export function rewardSummary(steps: RecordedStep[]): { positive: number; negative: number; text: string } {
  const positive = steps.filter((s) => s.reward > 0).length;
  const negative = steps.filter((s) => s.reward < 0).length;
  return { positive, negative, text: `reward +${positive}/−${negative}/0×${steps.length - positive - negative}` };
}

/** The nearest target's distance at each recorded step (undefined when none is in view), then at the end. */
export function targetSeries(ep: EpisodeRecord, targets: readonly string[]): { step: number; d: number | undefined }[] {
  const out = ep.lastSteps.map((st) => ({ step: st.step, d: nearestOf(st.nearest, targets)?.distance }));
  return out;
}
