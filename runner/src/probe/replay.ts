// Replays a reward on a probe bank in the real sandbox (../reward), with training's semantics: each episode
// begins with its first observation (GLOBAL_DATA = {}, the history seeded with the start position) and each
// step appends the next one; attack parameters as the task passes them; the limits of training. The file runs
// coverage-instrumented, so each value comes with the statement that produced it and each statement with the
// calls it ran in and what they paid.
import { readFileSync } from 'node:fs';
import {
  compilePythonReward,
  compileRewardFile,
  isPythonFile,
  loadPythonParser,
  RewardError,
  RewardSandbox,
  type CompiledReward,
  type CoverageCounts,
  type InputSwap,
  type RewardLimits,
} from '../reward/index';
import { PARAMETERS, type ParameterName, type ParameterSource, type StepObservation } from '../schema';
import type { TaskSpec } from '../tasks';
import { continuesPastProbe, type ProbeBank } from './bank';
import { parametersRead, type ParameterRead } from './reads';

/**
 * Training's limits, but a step's wall-clock allowance per call is shorter: a probe step carries one call per
 * episode of the bank (about 20), so a call that never returns would hold it 20 × 1 s. The per-call CPU limit,
 * which decides every other time-out, is training's.
 */
const PROBE_LIMITS: Partial<RewardLimits> = { callWallMs: 250 };

export interface EpisodeTrace {
  /** Index of the episode in the bank. */
  episode: number;
  /** The reward of each call (call t sees obs[t]); shorter than the episode when the replay stopped at a failure. */
  values: Float64Array;
  /** The statement (index into compiled.statements) that produced each value; -1 where none was marked. */
  last: Int32Array;
  /** For dense/sparse files: each part's raw value per call. */
  dense?: Float64Array;
  sparse?: Float64Array;
  /**
   * Calls of the recorded episode; an episode the bank cut short (a failure mode that had not ended) goes on with
   * the second half of its observations once more, continuing its GLOBAL_DATA and history: what that repeat pays
   * is what the behaviour earns steadily (a new closest distance is not paid twice; turning is).
   */
  recorded: number;
}

export interface ReplayFailure {
  error: RewardError;
  /** The episode and call (1-based step) where it happened, when the failure is a call's. */
  episode: number | null;
  step: number;
}

/** An episode replayed with one input taken from another episode (see swapPlan): does that input change the result? */
export interface SwapTrace {
  parameter: ParameterName;
  /** The episode replayed, and the episode its `parameter` came from (indices into the bank; the same: one step apart). */
  episode: number;
  donor: number;
  /** The reward of each call; NaN where the swapped input made the call fail. */
  values: Float64Array;
  /** Calls whose swapped input differed from the episode's own (0: the swap tested nothing). */
  differing: number;
}

export interface Replay {
  compiled: CompiledReward;
  traces: EpisodeTrace[];
  /** The same episodes replayed a second time in other envs of the same sandbox, alongside the first replay. */
  repeats: EpisodeTrace[];
  /** Episodes replayed with one parameter the file reads swapped for another episode's (after the repeats). */
  swaps: SwapTrace[];
  /** The parameters the file's exported functions read, each at its first read. */
  reads: Map<ParameterName, ParameterRead>;
  coverage: CoverageCounts | null;
  failure: ReplayFailure | null;
  /** Reward calls made. */
  calls: number;
}

/** Episodes replayed twice: the first of the bank (a teacher's success) and the first random one. */
function repeatedEpisodes(bank: ProbeBank): number[] {
  const random = bank.episodes.findIndex((e) => e.behaviour === 'random');
  return [...new Set([0, random].filter((i) => i >= 0 && i < bank.episodes.length))];
}

/** A statement's counts summed over some envs of a coverage replay: the calls it ran in, those that paid, and what they paid. */
export function statementTotals(cov: CoverageCounts, envs: readonly number[], k: number): { runs: number; paidRuns: number; paidSum: number } {
  const n = cov.statements;
  let runs = 0;
  let paidRuns = 0;
  let paidSum = 0;
  for (const env of envs) {
    runs += cov.runs[env * n + k]!;
    paidRuns += cov.paidRuns[env * n + k]!;
    paidSum += cov.paidSum[env * n + k]!;
  }
  return { runs, paidRuns, paidSum };
}

/** Inputs a swap can test: GLOBAL_DATA is the reward's own memory, not an observation. */
const SWAPPED = PARAMETERS.filter((p) => !('episode' in p.source && p.source.episode === 'memory'));
const SOURCE = new Map<ParameterName, ParameterSource>(PARAMETERS.map((p) => [p.name, p.source]));

/**
 * Which episodes replay with which input swapped: for each parameter the file reads, a successful episode with its
 * own input one step apart (the approach seen backwards), the successful episode with the random policy's input and
 * the random policy with the successful episode's, and, where the world has lava, the walk into it with the
 * successful episode's (health falls there). A few episodes per input keep the cost down.
 */
function swapPlan(bank: ProbeBank, reads: Map<ParameterName, ParameterRead>, attack: boolean): { episode: number; swap: InputSwap }[] {
  const first = (b: string) => bank.episodes.findIndex((e) => e.behaviour === b);
  const [teacher, random, hazard] = [first('teacher'), first('random'), first('hazard')];
  const pairs = [
    [teacher, teacher],
    [teacher, random],
    [random, teacher],
    [hazard, teacher],
  ].filter(([e, d]) => e! >= 0 && d! >= 0) as [number, number][];
  return SWAPPED.filter((p) => reads.has(p.name) && (attack || !p.attackOnly)).flatMap(({ name: parameter }) =>
    pairs.map(([episode, donor]) => ({ episode, swap: { parameter, donor } })),
  );
}

/**
 * The value of `parameter` at call t (1-based) of an episode's observations as the runtime builds it (the last
 * call's after the episode's end); `apart`: as the swap of an episode with itself builds it, one step apart.
 */
function inputAt(obs: StepObservation[], parameter: ParameterName, t: number, apart = false): unknown {
  const at = Math.min(t, obs.length - 1);
  const source = SOURCE.get(parameter)!;
  if ('field' in source) return obs[apart ? at - 1 : at]![source.field];
  if (source.episode === 'previous') return obs[apart ? at : at - 1]!.nearest;
  if (source.episode === 'history') return obs[apart ? at - 1 : at]!.position; // the newest entry: the histories differ from the first call whose entries differ
  return undefined;
}

/** Calls of a swapped episode whose input differs from the episode's own. */
function differingCalls(own: StepObservation[], donor: StepObservation[], parameter: ParameterName, self: boolean): number {
  let n = 0;
  let apart = false;
  const source = SOURCE.get(parameter)!;
  // A history differs from the first call whose newest entries differ on.
  const isHistory = 'episode' in source && source.episode === 'history';
  for (let t = 1; t < own.length; t++) {
    const differs = JSON.stringify(inputAt(own, parameter, t)) !== JSON.stringify(inputAt(donor, parameter, t, self));
    apart = isHistory ? apart || differs : differs;
    if (apart) n++;
  }
  return n;
}

/** One env of a replay: the episode it plays, its observations and, for a swap, which input comes from where. */
interface EnvPlan {
  episode: number;
  obs: StepObservation[];
  swap: InputSwap | null;
}

/**
 * Begins `plan`'s episodes in envs `first`, `first + 1`, … of the sandbox and steps them side by side to their
 * ends. Stops at the first failure (every trace cut there).
 */
async function play(
  sandbox: RewardSandbox,
  first: number,
  plan: EnvPlan[],
  bank: ProbeBank,
): Promise<{ traces: EpisodeTrace[]; failure: ReplayFailure | null; calls: number }> {
  const traces: EpisodeTrace[] = plan.map(({ episode, obs }) => {
    const calls = obs.length - 1;
    return {
      episode,
      values: new Float64Array(calls),
      last: new Int32Array(calls).fill(-1),
      ...(sandbox.compiled.exportsKind === 'dense_sparse' ? { dense: new Float64Array(calls), sparse: new Float64Array(calls) } : {}),
      recorded: bank.episodes[episode]!.obs.length - 1,
    };
  });
  const longest = Math.max(...plan.map((p) => p.obs.length));
  let failure: ReplayFailure | null = null;
  let calls = 0;
  await sandbox.beginEpisodes(
    plan.map((_, i) => first + i),
    plan.map((p) => p.obs[0]!),
    plan.map((p) => p.swap),
  );
  for (let t = 1; t < longest && !failure; t++) {
    const active = plan.flatMap((p, i) => (p.obs.length > t ? [i] : []));
    try {
      const { values, detail } = await sandbox.stepEnvs(
        active.map((i) => first + i),
        active.map((i) => plan[i]!.obs[t]!),
      );
      calls += active.length;
      active.forEach((i, k) => {
        const trace = traces[i]!;
        trace.values[t - 1] = values[k]!;
        trace.last[t - 1] = detail?.last[k] ?? -1;
        if (trace.dense && detail?.dense) {
          trace.dense[t - 1] = detail.dense[k]!;
          trace.sparse![t - 1] = detail.sparse![k]!;
        }
      });
    } catch (err) {
      if (!(err instanceof RewardError)) throw err;
      failure = { error: err, episode: err.env === null ? null : plan[err.env - first]!.episode, step: t };
      for (const trace of traces) cut(trace, t - 1);
    }
  }
  return { traces, failure, calls };
}

/**
 * The failure mode whose replay earned the most (or lost the most), when no first swap plays it: its inputs are
 * swapped too, with the successful episode's, in a second round (the looking-down a reward pays shows only there).
 */
function mostPaidFailureMode(traces: EpisodeTrace[], bank: ProbeBank, swapped: Set<number>): number | undefined {
  let best: { episode: number; paid: number } | undefined;
  for (const t of traces) {
    if (bank.episodes[t.episode]!.behaviour === 'teacher' || swapped.has(t.episode)) continue;
    const paid = Math.abs(t.values.reduce((a, b) => a + b, 0));
    if (paid > 0 && (!best || paid > best.paid)) best = { episode: t.episode, paid };
  }
  return best?.episode;
}

/**
 * Replays `file` (or `source`, its unsaved text) on every episode of the bank, side by side in one sandbox
 * (env i = episode i; the repeats in the envs after them, then the swaps; then a second round of swaps on the
 * failure mode paid most). Stops at the first failure, which it returns located. Compile and contract errors are
 * thrown (lint reports those).
 */
export async function replayBank(file: string, task: TaskSpec, bank: ProbeBank, source?: string): Promise<Replay> {
  const episodes = bank.episodes;
  const repeated = repeatedEpisodes(bank);
  const language = isPythonFile(file) ? 'python' : 'typescript';
  if (language === 'python') await loadPythonParser();
  const text = source ?? readFileSync(file, 'utf8');
  const reads = parametersRead(text, language);
  const swaps = swapPlan(bank, reads, task.attack);
  const swappedInputs = [...new Set(swaps.map((w) => w.swap.parameter))];
  const teacher = episodes.findIndex((e) => e.behaviour === 'teacher');
  const firstSwap = episodes.length + repeated.length;
  // The host's donor is an env: an episode's own env is its index; an episode swapped with itself is its own env.
  const sequences = episodes.map((e) => (continuesPastProbe(e) ? [...e.obs, ...e.obs.slice(Math.ceil(e.obs.length / 2))] : e.obs));
  // A swapped episode plays what was recorded (without the repeat of its second half, which only the incentives need).
  const plan: EnvPlan[] = [
    ...episodes.map((_, episode) => ({ episode, obs: sequences[episode]!, swap: null })),
    ...repeated.map((episode) => ({ episode, obs: sequences[episode]!, swap: null })),
    ...swaps.map((w, i) => ({
      episode: w.episode,
      obs: episodes[w.episode]!.obs,
      swap: { parameter: w.swap.parameter, donor: w.swap.donor === w.episode ? firstSwap + i : w.swap.donor },
    })),
  ];
  const longest = Math.max(...sequences.map((obs) => obs.length));
  // The second round: a copy of the successful episode (the donor) and the paid failure mode once per input.
  const envs = plan.length + (swappedInputs.length > 0 && teacher >= 0 ? 1 + swappedInputs.length : 0);
  let sandbox: RewardSandbox;
  try {
    sandbox = await RewardSandbox.open(file, envs, {
      attack: task.attack,
      episodeSteps: longest,
      source,
      coverage: true,
      limits: PROBE_LIMITS,
      warmHost: true,
    });
  } catch (err) {
    // The file's top level failed (a throw, a time limit): a failure before any step. Compile and contract errors are lint's.
    if (!(err instanceof RewardError) || err.kind === 'compile' || err.kind === 'contract') throw err;
    const compiled = language === 'python' ? compilePythonReward(file, text) : compileRewardFile(file, source, { coverage: true });
    return { compiled, traces: [], repeats: [], swaps: [], reads, coverage: null, failure: { error: err, episode: null, step: 0 }, calls: 0 };
  }
  const swapTrace = (w: { episode: number; swap: InputSwap }, values: Float64Array): SwapTrace => ({
    parameter: w.swap.parameter,
    episode: w.episode,
    donor: w.swap.donor,
    values,
    differing: differingCalls(episodes[w.episode]!.obs, sequences[w.swap.donor]!, w.swap.parameter, w.swap.donor === w.episode),
  });
  let calls = 0;
  try {
    const round = await play(sandbox, 0, plan, bank);
    calls += round.calls;
    const { traces, failure } = round;
    const coverage = failure ? null : await sandbox.coverage();
    const swapTraces = swaps.map((w, i) => swapTrace(w, traces[firstSwap + i]!.values));
    const paid =
      failure || envs === plan.length ? undefined : mostPaidFailureMode(traces.slice(0, episodes.length), bank, new Set(swaps.map((w) => w.episode)));
    if (paid !== undefined) {
      const second: EnvPlan[] = [
        { episode: teacher, obs: sequences[teacher]!, swap: null },
        ...swappedInputs.map((parameter) => ({ episode: paid, obs: episodes[paid]!.obs, swap: { parameter, donor: plan.length } })),
      ];
      const again = await play(sandbox, plan.length, second, bank);
      calls += again.calls;
      // A swap that made the reward fail (a time-out) changed what it does: its values are NaN.
      swappedInputs.forEach((parameter, i) => {
        const values = again.failure ? new Float64Array(episodes[paid]!.obs.length - 1).fill(Number.NaN) : again.traces[1 + i]!.values;
        swapTraces.push(swapTrace({ episode: paid, swap: { parameter, donor: teacher } }, values));
      });
    }
    return {
      compiled: sandbox.compiled,
      traces: traces.slice(0, episodes.length),
      repeats: traces.slice(episodes.length, firstSwap),
      swaps: swapTraces,
      reads,
      coverage,
      failure,
      calls,
    };
  } catch (err) {
    // The host died starting the episodes: a failure before any step.
    if (err instanceof RewardError)
      return { compiled: sandbox.compiled, traces: [], repeats: [], swaps: [], reads, coverage: null, failure: { error: err, episode: null, step: 0 }, calls };
    throw err;
  } finally {
    await sandbox.close();
  }
}

function cut(trace: EpisodeTrace, length: number): void {
  if (trace.values.length <= length) return;
  trace.values = trace.values.slice(0, length);
  trace.recorded = Math.min(trace.recorded, length);
  trace.last = trace.last.slice(0, length);
  if (trace.dense) trace.dense = trace.dense.slice(0, length);
  if (trace.sparse) trace.sparse = trace.sparse.slice(0, length);
}
