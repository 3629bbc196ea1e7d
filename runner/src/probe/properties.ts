// What a replay on the probe bank shows about a reward, as located findings with their evidence: failures at
// run time, rewards that differ on the same observations, names the task never shows, code that never runs, a
// reward that never varies, sparse and dense parts that do not do what their names say, and incentives: a failure
// mode that earns more per episode than succeeding does, at the statement that pays it.
//
// To add a property: write a function (replay, context) → ProbeFinding[] below, add it to PROPERTIES, and give
// the probe corpus (runner/test/fixtures/probe/) a reward that shows it (`// expect-probe: <code>` on the line).
import { percentText } from '../stats';
import type { StatementLocation } from '../reward/index';
import { SCALE_RULE } from '../schema';
import { successTargets, type TaskSpec } from '../tasks';
import { BEHAVIOURS, WORLD_SCAN_RADIUS, type Behaviour, type ProbeBank } from './bank';
import { functionLines, NAMED_PARAMETERS, namesRead } from './reads';
import { statementTotals, type EpisodeTrace, type Replay } from './replay';

export interface ProbeFinding {
  /** 1-based, in the reward file. */
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  severity: 'error' | 'warning' | 'information';
  /** `probe-<property>`. */
  code: string;
  message: string;
  /** The probe episode that shows it (index into the bank's episodes), for playback. */
  episode?: number;
}

export interface PropertyContext {
  task: TaskSpec;
  bank: ProbeBank;
  /** The reward file's text. */
  source: string;
}

type Property = (replay: Replay, ctx: PropertyContext) => ProbeFinding[];

const percent = (x: number) => percentText(x, 0);
const count = (n: number) => Math.round(n).toLocaleString('en-US');
/** A return in a message: 3 significant digits, thousands separated. */
const amount = (x: number) => (Math.abs(x) >= 100 ? count(x) : Number(x.toPrecision(3)).toString());

function at(loc: { line: number; column: number; endLine?: number; endColumn?: number }): Pick<ProbeFinding, 'line' | 'column' | 'endLine' | 'endColumn'> {
  return { line: loc.line, column: loc.column, endLine: loc.endLine ?? loc.line, endColumn: loc.endColumn ?? loc.column + 1 };
}

/** Where a statement is, cut to its first line (a diagnostic on a whole if-block would underline the block). */
function statementAt(s: StatementLocation, source: string): Pick<ProbeFinding, 'line' | 'column' | 'endLine' | 'endColumn'> {
  const lineText = source.split('\n')[s.line - 1] ?? '';
  const endColumn = s.endLine === s.line ? s.endColumn : lineText.length + 1;
  return { line: s.line, column: s.column, endLine: s.line, endColumn: Math.max(endColumn, s.column + 1) };
}

const describeEpisode = (bank: ProbeBank, episode: number) => {
  const e = bank.episodes[episode]!;
  return `${BEHAVIOURS[e.behaviour]} (probe episode ${episode + 1} of ${bank.episodes.length}, world ${e.seed})`;
};

/** Exceptions, non-numbers, non-finite values and time limits, at the step and line where they happen. */
const failures: Property = (replay, { bank }) => {
  const f = replay.failure;
  if (!f) return [];
  const e = f.error;
  const where =
    f.episode === null ? (f.step === 0 ? 'when the file was loaded' : `at step ${f.step}`) : `at step ${f.step} of ${describeEpisode(bank, f.episode)}`;
  // A sandbox host that could not start or died of something else is not the reward's doing: said, not held against it.
  if (e.kind === 'host') return [{ ...at(e), severity: 'warning', code: 'probe-not-run', message: `the probes could not run: ${e.detail}` }];
  const code = {
    throw: 'probe-throws',
    'bad-return': 'probe-bad-return',
    timeout: 'probe-timeout',
    memory: 'probe-memory',
    compile: 'probe-throws',
    contract: 'probe-throws',
  }[e.kind];
  return [
    { ...at(e), severity: 'error', code, message: `${e.detail} ${where}: training would stop here.`, ...(f.episode === null ? {} : { episode: f.episode }) },
  ];
};

/** Same observations, same rewards: the repeated episodes must give what their first replay gave. */
const determinism: Property = (replay, { bank, source }) => {
  for (const again of replay.repeats) {
    const first = replay.traces[again.episode]!;
    for (let t = 0; t < Math.min(first.values.length, again.values.length); t++) {
      if (Object.is(first.values[t], again.values[t])) continue;
      const s = replay.compiled.statements[again.last[t]!];
      const where = s ? statementAt(s, source) : at(replay.compiled.entries.reward_function ?? replay.compiled.entries.dense ?? { line: 1, column: 1 });
      return [
        {
          ...where,
          severity: 'warning',
          code: 'probe-nondeterministic',
          episode: again.episode,
          message: `the same observations give different rewards: replaying ${describeEpisode(bank, again.episode)} twice side by side gives ${amount(first.values[t]!)} and ${amount(again.values[t]!)} at step ${t + 1}. A reward that depends on more than its parameters and GLOBAL_DATA (Math.random, the clock, variables outside the function, shared by every episode) cannot be learned.`,
        },
      ];
    }
  }
  return [];
};

/** A name the code reads that no observation of the task's bank ever holds. */
const absentNames: Property = (replay, { task, bank, source }) => {
  const findings: ProbeFinding[] = [];
  for (const read of namesRead(source, replay.compiled.language)) {
    const kind = NAMED_PARAMETERS[read.parameter]!;
    if (kind === 'mob' && !task.attack) continue; // kill_entity is not passed at all; the contract check says so
    const seen = bank.names[kind];
    // The task's own target names are observable by definition, however rarely the bank's worlds show one.
    const targets = successTargets(task);
    // A name the task's worlds hold near where episodes start (lava in a cave) may matter although no probe saw it.
    if (seen.includes(read.name) || targets.includes(read.name) || (kind === 'nearby' && bank.worldNames.includes(read.name))) continue;
    const shown = seen.length > 12 ? `${seen.slice(0, 12).join(', ')}, …` : seen.join(', ') || 'none';
    findings.push({
      ...at({ line: read.line, column: read.column, endColumn: read.endColumn }),
      severity: 'warning',
      code: 'probe-absent-name',
      message: `'${read.name}' never occurs in ${read.parameter} on any of the ${bank.episodes.length} probe episodes of ${task.id} (${countSteps(bank)} steps; names seen: ${shown}), nor in their worlds within ${WORLD_SCAN_RADIUS} m of the start, so what depends on it never happens.`,
    });
  }
  return findings;
};

const countSteps = (bank: ProbeBank) => count(bank.episodes.reduce((n, e) => n + e.obs.length - 1, 0));

/** How often statement `k` ran over the bank's episodes. */
function ranAnywhere(replay: Replay, bank: ProbeBank, k: number): number {
  const cov = replay.coverage!;
  let n = 0;
  for (let env = 0; env < bank.episodes.length; env++) n += cov.runs[env * cov.statements + k]!;
  return n;
}

/** Statements that run on no probe episode (the outermost of each such region), as information. */
const neverRun: Property = (replay, { bank, source }) => {
  const cov = replay.coverage;
  if (!cov) return [];
  const n = cov.statements;
  const ran = new Float64Array(n);
  for (let env = 0; env < bank.episodes.length; env++) for (let k = 0; k < n; k++) ran[k] += cov.runs[env * n + k]!;
  const findings: ProbeFinding[] = [];
  let coveredUntil = { line: 0, column: 0 };
  replay.compiled.statements.forEach((s, k) => {
    if (ran[k]! > 0) return;
    const inside = s.line < coveredUntil.line || (s.line === coveredUntil.line && s.column < coveredUntil.column);
    if (inside) return;
    coveredUntil = { line: s.endLine, column: s.endColumn };
    findings.push({
      ...statementAt(s, source),
      severity: 'information',
      code: 'probe-never-runs',
      message: `never runs on any of the ${bank.episodes.length} probe episodes of ${bank.task} (${countSteps(bank)} steps: successes, a random policy and ${Object.keys(BEHAVIOURS).length - 2} failure modes).`,
    });
  });
  return findings;
};

/** A reward that returns one value on every probe call gives the agent nothing to learn from. */
const constant: Property = (replay, { bank, source }) => {
  const all = replay.traces.flatMap((t) => Array.from(t.values));
  if (all.length === 0 || replay.failure || replay.compiled.exportsKind === 'dense_sparse') return [];
  if (all.some((v) => v !== all[0])) return [];
  // The branch that would have paid something else is the first statement that never ran; without one, the
  // statement that returned the value most often.
  const lasts = new Map<number, number>();
  for (const t of replay.traces) for (const k of t.last) lasts.set(k, (lasts.get(k) ?? 0) + 1);
  const [top] = [...lasts.entries()].sort((a, b) => b[1] - a[1]);
  const never = replay.coverage ? replay.compiled.statements.findIndex((_, k) => ranAnywhere(replay, bank, k) === 0) : -1;
  const s = replay.compiled.statements[never >= 0 ? never : (top?.[0] ?? -1)];
  return [
    {
      ...(s ? statementAt(s, source) : at(replay.compiled.entries.reward_function ?? { line: 1, column: 1 })),
      severity: 'warning',
      code: 'probe-constant',
      message: `returns ${amount(all[0]!)} on every one of the ${count(all.length)} probe calls (${bank.episodes.filter((e) => e.behaviour === 'teacher').length} successful episodes among them)${never >= 0 ? '; this never runs' : ''}: the agent gets nothing to learn from.`,
    },
  ];
};

/** Sparse pays at success and rarely else; dense varies. */
const sparseDense: Property = (replay, { bank }) => {
  const { entries } = replay.compiled;
  if (replay.compiled.exportsKind !== 'dense_sparse' || replay.failure || !entries.sparse || !entries.dense) return [];
  const findings: ProbeFinding[] = [];
  const successes = replay.traces.filter((t) => bank.episodes[t.episode]!.behaviour === 'teacher');
  const failing = replay.traces.filter((t) => !bank.episodes[t.episode]!.success);
  if (successes.length > 0 && successes.every((t) => t.sparse!.every((v) => v <= 0)))
    findings.push({
      ...at(entries.sparse),
      severity: 'warning',
      code: 'probe-sparse-never-pays',
      message: `sparse is never positive on any of the ${successes.length} successful probe episodes of ${bank.task}: the success it should mark goes unpaid.`,
    });
  const failingSteps = failing.reduce((n, t) => n + t.sparse!.length, 0);
  const failingPaid = failing.reduce((n, t) => n + t.sparse!.filter((v) => v > 0).length, 0);
  if (failingSteps > 0 && failingPaid / failingSteps > 0.5)
    findings.push({
      ...at(entries.sparse),
      severity: 'warning',
      code: 'probe-sparse-dense',
      message: `sparse is positive on ${percent(failingPaid / failingSteps)} of the ${count(failingSteps)} steps of failing probe episodes: a sparse term pays for milestones, not for most steps (move it to dense).`,
    });
  const dense = replay.traces.flatMap((t) => Array.from(t.dense!));
  if (dense.length > 0 && dense.every((v) => v === dense[0]))
    findings.push({
      ...at(entries.dense),
      severity: 'warning',
      code: 'probe-dense-constant',
      message: `dense returns ${amount(dense[0]!)} on every one of the ${count(dense.length)} probe calls: it shapes nothing.`,
    });
  return findings;
};

/** What a behaviour earns per episode of the task's length, from its probe episodes. */
interface Earnings {
  behaviour: Behaviour;
  /** Per full episode: what the recorded probe earned plus, for an episode the probe cut, its steady rate times the steps left. */
  perEpisode: number;
  /** What the steady rate alone earns over a whole episode. */
  steadyPerEpisode: number;
  /** Share of its recorded steps that paid more than 0. */
  paidShare: number;
  probeSteps: number;
  episodes: number;
  /** Its first probe episode (index into the bank). */
  first: number;
  /** Whether its episodes were counted past the probe (bank.ts, continuesPastProbe): per episode of the task's length. */
  extended: boolean;
}

/**
 * A failure mode's earnings: a probe episode that ended (death) counts as it is; one the probe cut counts what it
 * earned plus its steady rate over the rest of the task's episode. The steady rate is what the repeat of its
 * second half paid per call (see EpisodeTrace.recorded), the smaller of the repeat's two halves.
 */
function earnings(behaviour: Behaviour, traces: EpisodeTrace[], bank: ProbeBank): Earnings {
  let total = 0,
    steady = 0,
    paid = 0,
    steps = 0;
  const sum = (v: Float64Array) => v.reduce((a, b) => a + b, 0);
  for (const t of traces) {
    const recorded = t.values.subarray(0, t.recorded);
    const repeat = t.values.subarray(t.recorded);
    steps += recorded.length;
    paid += recorded.filter((x) => x > 0).length;
    const half = Math.floor(repeat.length / 2);
    const rate = half > 0 ? Math.max(0, Math.min(sum(repeat.subarray(0, half)) / half, sum(repeat.subarray(half)) / (repeat.length - half))) : 0;
    total += sum(recorded) + rate * Math.max(0, bank.maxSteps - recorded.length);
    steady += rate * bank.maxSteps;
  }
  const n = Math.max(1, traces.length);
  return {
    behaviour,
    perEpisode: total / n,
    steadyPerEpisode: steady / n,
    paidShare: paid / Math.max(1, steps),
    probeSteps: steps,
    episodes: traces.length,
    first: traces[0]?.episode ?? -1,
    extended: traces.some((t) => t.values.length > t.recorded),
  };
}

/** Where a behaviour's pay comes from: the statement, and, when no one statement pays half of it, its share. */
interface PayingStatement {
  k: number;
  /** Set when the pay is split between branches: this statement's share, and the lines of the others that pay whenever they run. */
  split?: { share: number; otherLines: number[] };
}

/**
 * The statement that pays a behaviour: among those that ran in calls earning at least half its pay, the one that
 * ran most exclusively in paid calls; of equals, the one that runs least over the whole bank (the term, not the
 * `return` every call passes). When that one also runs in calls it did not pay (a check that falls through to
 * the next) and the pay is split between statements that pay whenever they run (`return 1` of several checks),
 * the one of those that pays most: the check every paid call passes is not what paid them.
 */
function payingStatement(replay: Replay, envs: number[], bank: ProbeBank, within?: { line: number; endLine: number }): PayingStatement | undefined {
  const cov = replay.coverage;
  if (!cov) return undefined;
  const n = cov.statements;
  let totalPaid = 0;
  for (const env of envs) for (const v of replay.traces[env]!.values) if (v > 0) totalPaid += v;
  let best: { k: number; precision: number; everywhere: number } | undefined;
  const alwaysPaying: { k: number; paidSum: number; everywhere: number }[] = [];
  for (let k = 0; k < n; k++) {
    const { runs, paidRuns, paidSum } = statementTotals(cov, envs, k);
    if (runs === 0) continue;
    const s = replay.compiled.statements[k]!;
    if (within && (s.line < within.line || s.endLine > within.endLine)) continue;
    let everywhere = 0;
    for (let env = 0; env < bank.episodes.length; env++) everywhere += cov.runs[env * n + k]!;
    const precision = paidRuns / runs;
    if (paidRuns === runs && paidSum > 0) alwaysPaying.push({ k, paidSum, everywhere });
    if (paidSum < 0.5 * totalPaid) continue;
    // Of statements that run together (a straight-line body), the last: the one nearest the value returned.
    if (!best || precision > best.precision + 1e-9 || (Math.abs(precision - best.precision) <= 1e-9 && everywhere <= best.everywhere))
      best = { k, precision, everywhere };
  }
  if (!best || best.precision >= 1 - 1e-9 || alwaysPaying.length === 0) return best && { k: best.k };
  // Of a statement and one nested in it that both pay whenever they run, the nested one (it runs no more often).
  alwaysPaying.sort((a, b) => b.paidSum - a.paidSum || a.everywhere - b.everywhere);
  const top = alwaysPaying[0]!;
  const lines = (k: number) => replay.compiled.statements[k]!.line;
  const otherLines = [...new Set(alwaysPaying.filter((p) => p.paidSum > 0 && !containsLine(replay, top.k, p.k)).map((p) => lines(p.k)))].filter(
    (line) => line !== lines(top.k),
  );
  return { k: top.k, split: { share: top.paidSum / totalPaid, otherLines } };
}

/** Whether statement `outer` spans statement `inner` (a check and the `return` it guards). */
function containsLine(replay: Replay, outer: number, inner: number): boolean {
  const o = replay.compiled.statements[outer]!,
    i = replay.compiled.statements[inner]!;
  return (o.line <= i.line && i.endLine <= o.endLine) || (i.line <= o.line && o.endLine <= i.endLine);
}

/** In a dense/sparse file, the function whose part paid a behaviour most (the runtime adds their signs, weighted). */
function payingPart(replay: Replay, traces: EpisodeTrace[], source: string): { line: number; endLine: number } | undefined {
  if (replay.compiled.exportsKind !== 'dense_sparse') return undefined;
  let dense = 0,
    sparse = 0;
  for (const t of traces)
    for (let i = 0; i < t.values.length; i++) {
      if (t.dense![i]! > 0) dense += SCALE_RULE.denseWeight;
      if (t.sparse![i]! > 0) sparse += SCALE_RULE.sparseWeight;
    }
  return functionLines(source, replay.compiled.language, sparse > dense ? 'sparse' : 'dense');
}

/** Where else a split pay comes from: `; this line pays 47 % of it, lines 14 and 17 pay it too`. */
function splitText(split: PayingStatement['split']): string {
  if (!split) return '';
  const others = split.otherLines.sort((a, b) => a - b);
  const rest =
    others.length === 0
      ? ''
      : `, line${others.length > 1 ? 's' : ''} ${others.slice(0, -1).join(', ')}${others.length > 1 ? ' and ' : ''}${others.at(-1)} pay${others.length > 1 ? '' : 's'} it too`;
  return `; this line pays ${percent(split.share)} of it${rest}`;
}

/** How much more than success a failure mode must earn to be called out (noise in a cut probe's extrapolation). */
const INCENTIVE_MARGIN = 1.1;

/** What a failure mode's earnings are compared with: the mean return of successful episodes. */
interface SuccessReturn {
  mean: number;
  episodes: number;
  /** Only the successes on the failure mode's own worlds (a retreat's, whose approach is theirs). */
  sameWorlds: boolean;
}

const totalOf = (t: EpisodeTrace) => t.values.reduce((a, b) => a + b, 0);

/**
 * Does a failure mode out-earn success? What it earns steadily, not once (a new closest distance), must beat
 * success: a one-off payment depends on how far the world put the target, a steady one grows with the episode.
 */
function outEarnsSuccess(e: Earnings, success: SuccessReturn): boolean {
  return e.steadyPerEpisode > 0 && e.steadyPerEpisode > Math.max(0, success.mean) * INCENTIVE_MARGIN && e.perEpisode > success.mean;
}

/**
 * A retreat against the successes on its own worlds: its approach is the teacher's, step for step, so the two
 * differ only in walking away from the target or up to it, and a one-off payment counts (distance gained from
 * the target is bounded by the view, not by the episode: reversed distance shaping pays it once, and outright).
 * It must be paid after the approach (where the two first act differently), and earn more than succeeding there.
 */
function retreatOutEarnsSuccess(e: Earnings, traces: EpisodeTrace[], successes: EpisodeTrace[], bank: ProbeBank): SuccessReturn | undefined {
  const paired: EpisodeTrace[] = [];
  let away = 0;
  for (const t of traces) {
    const retreat = bank.episodes[t.episode]!;
    const success = successes.find((s) => bank.episodes[s.episode]!.seed === retreat.seed);
    if (!success) return undefined;
    paired.push(success);
    const actions = bank.episodes[success.episode]!.actions;
    let turned = 0;
    while (turned < actions.length && actions[turned] === retreat.actions[turned]) turned++;
    // Value i is call i + 1's, which sees the observation after action i: the first one after the approach.
    away += t.values.subarray(turned, t.recorded).reduce((a, b) => a + b, 0);
  }
  if (paired.length === 0) return undefined;
  const success = { mean: paired.reduce((a, t) => a + totalOf(t), 0) / paired.length, episodes: paired.length, sameWorlds: true };
  return away > 0 && e.perEpisode > Math.max(0, success.mean) * INCENTIVE_MARGIN && e.perEpisode > success.mean ? success : undefined;
}

/** Failure modes that earn more per episode than the teacher's successes, at the statement that pays them. */
const incentives: Property = (replay, { bank, source }) => {
  if (replay.failure) return [];
  const byBehaviour = new Map<Behaviour, EpisodeTrace[]>();
  for (const t of replay.traces) {
    const e = bank.episodes[t.episode]!;
    if (e.success && e.behaviour !== 'teacher') continue; // a failure mode that happened to succeed is not one
    byBehaviour.set(e.behaviour, [...(byBehaviour.get(e.behaviour) ?? []), t]);
  }
  const successes = byBehaviour.get('teacher') ?? [];
  if (successes.length === 0) return [];
  const allSuccesses: SuccessReturn = { mean: successes.reduce((a, t) => a + totalOf(t), 0) / successes.length, episodes: successes.length, sameWorlds: false };
  const paying = new Map<number, { earned: Earnings; success: SuccessReturn; split?: PayingStatement['split'] }[]>();
  for (const [behaviour, traces] of byBehaviour) {
    if (behaviour === 'teacher' || behaviour === 'random') continue;
    const e = earnings(behaviour, traces, bank);
    const success = behaviour === 'retreat' ? retreatOutEarnsSuccess(e, traces, successes, bank) : outEarnsSuccess(e, allSuccesses) ? allSuccesses : undefined;
    if (!success) continue;
    const payer = payingStatement(
      replay,
      traces.map((t) => t.episode),
      bank,
      payingPart(replay, traces, source),
    );
    const k = payer?.k ?? -1;
    paying.set(k, [...(paying.get(k) ?? []), { earned: e, success, split: payer?.split }]);
  }
  const findings: ProbeFinding[] = [];
  for (const [k, list] of paying) {
    list.sort((a, b) => b.earned.perEpisode - a.earned.perEpisode);
    const [{ earned: worst, success, split }, ...others] = list as [(typeof list)[number], ...typeof list];
    const s = replay.compiled.statements[k];
    const steps = `${count(worst.probeSteps / worst.episodes)} steps`;
    const earned = worst.extended ? `${amount(worst.perEpisode)} per ${count(bank.maxSteps)}-step episode` : `${amount(worst.perEpisode)} over its ${steps}`;
    const also = others.length ? `; also ${others.map((o) => `${BEHAVIOURS[o.earned.behaviour]} (${amount(o.earned.perEpisode)})`).join(', ')}` : '';
    const how = worst.extended
      ? ` (probes: ${worst.episodes} episodes of ${steps}, the rest at the rate a repeat of their second half paid)`
      : ` (probes: ${worst.episodes} episodes, each the teacher's approach and then this, not extended past the probe)`;
    const successText = `a successful episode${success.sameWorlds ? ' on the same worlds, after the same approach,' : ''} earns ${amount(success.mean)} (mean of ${success.episodes})`;
    findings.push({
      ...(s ? statementAt(s, source) : at(replay.compiled.entries.reward_function ?? replay.compiled.entries.dense ?? { line: 1, column: 1 })),
      severity: 'warning',
      code: 'probe-incentive',
      ...(worst.first >= 0 ? { episode: worst.first } : {}),
      message: `${BEHAVIOURS[worst.behaviour]} is paid on ${percent(worst.paidShare)} of its steps: ${earned}; ${successText}${how}${also}${splitText(split)}. The agent learns to do this instead of the task.`,
    });
  }
  return findings;
};

/**
 * An input the reward reads whose value never changes the result: the episodes replayed with that parameter taken
 * from another probe episode (replay.ts, swapPlan) give the same reward on every call, although the input differed.
 * What the code computes from it is lost (multiplied by 0, clamped away, overwritten, compared with itself).
 */
const inputsUnused: Property = (replay, { bank }) => {
  const first = replay.traces[0]?.values[0];
  const constantReward = replay.traces.every((t) => t.values.every((v) => v === first)); // the constant property says it
  if (replay.failure || constantReward) return [];
  const findings: ProbeFinding[] = [];
  for (const [parameter, read] of replay.reads) {
    const swaps = replay.swaps.filter((w) => w.parameter === parameter);
    const differing = swaps.reduce((n, w) => n + w.differing, 0);
    if (swaps.length === 0 || differing === 0) continue; // the bank never shows it varying: nothing was tested
    const changed = swaps.some((w) => {
      const own = replay.traces[w.episode]!.values;
      return w.values.some((v, t) => !Object.is(v, own[t]));
    });
    if (changed) continue;
    const calls = swaps.reduce((n, w) => n + w.values.length, 0);
    const episodes = swaps
      .map(
        (w) =>
          `${BEHAVIOURS[bank.episodes[w.episode]!.behaviour]} with ${w.donor === w.episode ? 'its own one step apart' : `that of ${BEHAVIOURS[bank.episodes[w.donor]!.behaviour]}`}`,
      )
      .join('; ');
    const lines = read.lines.length > 8 ? `${read.lines.slice(0, 8).join(', ')} and ${read.lines.length - 8} more` : read.lines.join(', ');
    const also = read.lines.length > 1 ? ` (read on lines ${lines})` : '';
    findings.push({
      ...at({ line: read.line, column: read.column, endColumn: read.endColumn }),
      severity: 'warning',
      code: 'probe-input-unused',
      message: `${parameter} is read here${also} but its value never changes the reward: replaying probe episodes with it taken from another episode (${episodes}) gives the same reward on all ${count(calls)} calls, although it differed on ${count(differing)} of them. What the code computes from it is lost (multiplied by 0, clamped away, overwritten or compared with itself).`,
    });
  }
  return findings;
};

export const PROPERTIES: readonly Property[] = [failures, determinism, absentNames, constant, sparseDense, incentives, inputsUnused, neverRun];

export function checkProperties(replay: Replay, ctx: PropertyContext): ProbeFinding[] {
  return PROPERTIES.flatMap((p) => p(replay, ctx)).sort((a, b) => a.line - b.line || a.column - b.column);
}
