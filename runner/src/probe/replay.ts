// Replays a reward on a probe bank in the real sandbox (../reward), with training's semantics: each episode
// begins with its first observation (GLOBAL_DATA = {}, the history seeded with the start position) and each
// step appends the next one; attack parameters as the task passes them; the limits of training. The file runs
// coverage-instrumented, so each value comes with the statement that produced it and each statement with the
// calls it ran in and what they paid.
import { compileRewardFile, RewardError, RewardSandbox, type CompiledReward, type CoverageCounts, type RewardLimits } from '../reward/index';
import type { TaskSpec } from '../tasks';
import type { ProbeBank } from './bank';

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

export interface Replay {
  compiled: CompiledReward;
  traces: EpisodeTrace[];
  /** The same episodes replayed a second time in other envs of the same sandbox, alongside the first replay. */
  repeats: EpisodeTrace[];
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

/**
 * Replays `file` (or `source`, its unsaved text) on every episode of the bank, side by side in one sandbox
 * (env i = episode i; the repeats in the envs after them). Stops at the first failure, which it returns located.
 * Compile and contract errors are thrown (lint reports those).
 */
export async function replayBank(file: string, task: TaskSpec, bank: ProbeBank, source?: string): Promise<Replay> {
  const episodes = bank.episodes;
  const repeated = repeatedEpisodes(bank);
  const slots = [...episodes.map((_, i) => i), ...repeated]; // env → episode
  const sequences = episodes.map((e) => (e.success || e.died || e.behaviour === 'teacher' ? e.obs : [...e.obs, ...e.obs.slice(Math.ceil(e.obs.length / 2))]));
  const longest = Math.max(...sequences.map((obs) => obs.length));
  let sandbox: RewardSandbox;
  try {
    sandbox = await RewardSandbox.open(file, slots.length, { attack: task.attack, episodeSteps: longest, source, coverage: true, limits: PROBE_LIMITS });
  } catch (err) {
    // The file's top level failed (a throw, a time limit): a failure before any step. Compile and contract errors are lint's.
    if (!(err instanceof RewardError) || err.kind === 'compile' || err.kind === 'contract') throw err;
    const compiled = compileRewardFile(file, source, { coverage: true });
    return { compiled, traces: [], repeats: [], coverage: null, failure: { error: err, episode: null, step: 0 }, calls: 0 };
  }
  const traces: EpisodeTrace[] = slots.map((episode) => {
    const calls = sequences[episode]!.length - 1;
    return {
      episode,
      values: new Float64Array(calls),
      last: new Int32Array(calls).fill(-1),
      ...(sandbox.compiled.exportsKind === 'dense_sparse' ? { dense: new Float64Array(calls), sparse: new Float64Array(calls) } : {}),
      recorded: episodes[episode]!.obs.length - 1,
    };
  });
  let failure: ReplayFailure | null = null;
  let calls = 0;
  try {
    await sandbox.beginEpisodes(
      slots.map((_, env) => env),
      slots.map((episode) => sequences[episode]![0]!),
    );
    for (let t = 1; t < longest && !failure; t++) {
      const envs = slots.flatMap((episode, env) => (sequences[episode]!.length > t ? [env] : []));
      try {
        const { values, detail } = await sandbox.stepEnvs(
          envs,
          envs.map((env) => sequences[slots[env]!]![t]!),
        );
        calls += envs.length;
        envs.forEach((env, k) => {
          const trace = traces[env]!;
          trace.values[t - 1] = values[k]!;
          trace.last[t - 1] = detail?.last[k] ?? -1;
          if (trace.dense && detail?.dense) {
            trace.dense[t - 1] = detail.dense[k]!;
            trace.sparse![t - 1] = detail.sparse![k]!;
          }
        });
      } catch (err) {
        if (!(err instanceof RewardError)) throw err;
        failure = { error: err, episode: err.env === null ? null : slots[err.env]!, step: t };
        for (const trace of traces) cut(trace, t - 1);
      }
    }
    const coverage = failure ? null : await sandbox.coverage();
    return { compiled: sandbox.compiled, traces: traces.slice(0, episodes.length), repeats: traces.slice(episodes.length), coverage, failure, calls };
  } catch (err) {
    // The host died starting the episodes: a failure before any step.
    if (err instanceof RewardError)
      return { compiled: sandbox.compiled, traces: [], repeats: [], coverage: null, failure: { error: err, episode: null, step: 0 }, calls };
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
