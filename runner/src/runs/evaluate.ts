// Evaluation on held-out worlds: run a policy for K episodes on seeds disjoint from training, with the
// reward in its sandbox (so records carry the rewards the agent saw), and write the run's evaluation records
// in the analyzer's format (last 32 steps, final state, full path).

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { makeFolder, writeAtomic } from '../files';
import type { TaskSpec } from '../tasks';
import type { StepObservation } from '../schema';
import { HOLD_ACTION, type VecEnv } from '../env/types';
import { createEnv } from '../env/index';
import { hash32, nextEpisodeSeed } from '../seeds';
import {
  readRunRewardCopy,
  RUN_FILES,
  rateRecord,
  runRewardCopy,
  RunRecordError,
  type BelowStart,
  type EpisodeRecord,
  type GeneralisationGap,
  type RunSummary,
} from '../records';
import { EpisodeRecorder } from './recorder';
import { makeEvent, type RunnerEvent } from '../events';
import { RewardSandbox } from '../reward/index';
import { ensureBackend, type BackendChoice } from '../ppo/backend';
import { engineOf, loadNetwork } from '../ppo/learner';
import { resolveCheckpointDir, Rng, sampleActions, type PolicyNetwork } from '../ppo/policy';
import { checkpointState, type TrainState } from './run-folder';

export const DEFAULT_EVAL_EPISODES = 100;
// Evaluation batch: enough envs to keep the workers busy, few enough that little runs past the last episode.
export const EVAL_ENVS = 25;
// Salt of the evaluation seed streams; training streams use the run seed directly (see train.ts).
const EVAL_SALT = 0x0e7a1;

/** First seed of env `i`'s training stream for run seed `seed`. */
export const trainingStreamSeed = (seed: number, i: number) => hash32(seed, i, 0x7a1);
/** First seed of env `i`'s evaluation stream for run seed `seed`. */
export const evalStreamSeed = (seed: number, i: number, attempt = 0) => hash32(seed, i, EVAL_SALT, attempt);

export interface EvaluateOptions {
  task: TaskSpec;
  episodes: number;
  numEnvs: number;
  seed: number;
  /** Seeds trained on; an evaluation episode never uses one of them. */
  trainingSeeds: ReadonlySet<number>;
  /** One action per env for numEnvs × featureSize features. */
  act: (features: Float32Array, numEnvs: number) => Int32Array;
  sandbox: RewardSandbox | null;
  workers?: number;
  emit?: (e: RunnerEvent) => void;
  onEpisode?: (done: number, total: number) => void;
}

export type EvalSummary = RunSummary['eval'];

export async function evaluate(opts: EvaluateOptions): Promise<{ summary: EvalSummary; episodes: EpisodeRecord[]; frames: number }> {
  const n = Math.max(1, Math.min(opts.numEnvs, opts.episodes));
  const env: VecEnv = await createEnv({ task: opts.task, numEnvs: n, seed: opts.seed, workers: opts.workers });
  try {
    return await runEpisodes(env, n, opts);
  } finally {
    await env.close();
  }
}

async function runEpisodes(env: VecEnv, n: number, opts: EvaluateOptions) {
  const episodes: EpisodeRecord[] = [];
  let started = 0,
    frames = 0;
  const heldOut = (s: number) => !opts.trainingSeeds.has(s);
  const firstSeeds = Array.from({ length: n }, (_, i) => {
    let attempt = 0,
      s = evalStreamSeed(opts.seed, i);
    while (!heldOut(s)) s = evalStreamSeed(opts.seed, i, ++attempt);
    return s;
  });
  const recorder = new EpisodeRecorder(opts.sandbox?.compiled.exportsKind ?? null);
  // An env whose episode does not count once all counted episodes have started is held (not stepped): nothing it
  // does can count any more. The others step as before (each env's worlds, actions and rewards are its own).
  const held = new Uint8Array(n);
  const begin = (i: number, seed: number, obs: StepObservation) => {
    const counted = started < opts.episodes && heldOut(seed);
    recorder.begin(i, seed, counted ? started++ : -1, obs, counted);
    if (!counted && started >= opts.episodes) held[i] = 1;
  };
  const reset = await env.reset(firstSeeds);
  reset.obs.forEach((o, i) => begin(i, firstSeeds[i]!, o));
  await opts.sandbox?.beginEpisodes(
    reset.obs.map((_, i) => i),
    reset.obs,
  );
  let features = reset.features;
  while (episodes.length < opts.episodes) {
    const actions = opts.act(features, n);
    const stepped: number[] = [];
    for (let i = 0; i < n; i++) {
      if (held[i]) actions[i] = HOLD_ACTION;
      else stepped.push(i);
    }
    const res = await env.step(actions);
    frames += stepped.length;
    const rewards = await stepRewards(opts.sandbox, res.obs, stepped);
    const doneEnvs: number[] = [],
      doneObs: StepObservation[] = [];
    for (const i of stepped) {
      const obs = res.obs[i]!,
        info = res.info[i]!;
      recorder.step(i, actions[i]!, rewards[i]!, obs, info);
      if (!info.done) continue;
      const record = recorder.finish(i, obs, info);
      if (record) {
        episodes.push(record);
        opts.onEpisode?.(episodes.length, opts.episodes);
        if (!record.success) {
          opts.emit?.(
            makeEvent({
              type: 'episode_failed',
              episode: record.episode,
              seed: record.seed,
              steps: record.steps,
              died: record.died,
              death_cause: record.deathCause,
              path: record.path.map(([x, , z]) => [x, z] as [number, number]),
            }),
          );
        }
      }
      // The env has auto-reset onto the next seed of its stream (the same rule the simulator applies).
      begin(i, nextEpisodeSeed(recorder.seedOf(i), i), res.resetObs[i]!);
      doneEnvs.push(i);
      doneObs.push(res.resetObs[i]!);
    }
    if (opts.sandbox && doneEnvs.length > 0) await opts.sandbox.beginEpisodes(doneEnvs, doneObs);
    features = res.features;
  }
  episodes.sort((a, b) => a.episode - b.episode);
  return { summary: summarise(episodes), episodes, frames };
}

/** Each stepped env's reward for its observation (0 for the others, and without a reward). */
async function stepRewards(sandbox: RewardSandbox | null, obs: StepObservation[], stepped: number[]): Promise<Float64Array> {
  if (!sandbox) return new Float64Array(obs.length);
  if (stepped.length === obs.length) return sandbox.step(obs);
  const rewards = new Float64Array(obs.length);
  const { values } = await sandbox.stepEnvs(
    stepped,
    stepped.map((i) => obs[i]!),
  );
  stepped.forEach((env, k) => {
    rewards[env] = values[k]!;
  });
  return rewards;
}

export function summarise(episodes: EpisodeRecord[]): EvalSummary {
  const k = episodes.length || 1;
  const deathCauses: Record<string, number> = {};
  for (const e of episodes) if (e.died) deathCauses[e.deathCause ?? 'other'] = (deathCauses[e.deathCause ?? 'other'] ?? 0) + 1;
  const successes = episodes.filter((e) => e.success).length;
  const deaths = episodes.filter((e) => e.died).length;
  return {
    episodes: episodes.length,
    success_rate: successes / k,
    death_rate: deaths / k,
    success: rateRecord(successes, episodes.length),
    death: rateRecord(deaths, episodes.length),
    death_causes: deathCauses,
    avg_steps: episodes.reduce((s, e) => s + e.steps, 0) / k,
    avg_distance_moved: episodes.reduce((s, e) => s + e.distanceMoved, 0) / k,
  };
}

/** Writes eval/episodes.ndjson (every episode) and eval/failed_episodes.json (the failed ones). */
export function writeEvalRecords(runDir: string, episodes: EpisodeRecord[]): void {
  makeFolder(path.join(runDir, path.dirname(RUN_FILES.episodes)));
  writeAtomic(path.join(runDir, RUN_FILES.episodes), episodes.map((e) => JSON.stringify(e)).join('\n') + (episodes.length ? '\n' : ''));
  writeAtomic(
    path.join(runDir, RUN_FILES.failedEpisodes),
    JSON.stringify(
      episodes.filter((e) => !e.success),
      null,
      1,
    ) + '\n',
  );
}

/** A policy's actions in evaluation: sampled from its probabilities with the evaluation stream of `seed`. */
export function sampledActions(net: PolicyNetwork, numActions: number, seed: number): EvaluateOptions['act'] {
  const rng = new Rng(seed ^ 0xe7a1);
  return (features, numEnvs) => sampleActions(net.evaluate(features, numEnvs).probs, numEnvs, numActions, rng);
}

/** Seeds a checkpoint must not be evaluated on: its run's training worlds and its initial policy's demonstration worlds. */
function seenSeeds(loaded: ReturnType<typeof loadNetwork>, state: TrainState | null): Set<number> {
  return new Set([...(state?.trainingSeeds ?? []), ...(loaded.file.worldSeeds ?? [])]);
}

/** The held-out evaluation of a loaded checkpoint (what `eval` and `evaluateCheckpoint` share). */
export function evaluatePolicy(
  loaded: ReturnType<typeof loadNetwork>,
  state: TrainState | null,
  o: {
    task: TaskSpec;
    episodes: number;
    envs: number;
    seed: number;
    sandbox: RewardSandbox | null;
    excludeSeeds?: Iterable<number>;
    workers?: number;
    emit?: (e: RunnerEvent) => void;
    onEpisode?: (done: number, total: number) => void;
  },
) {
  const trainingSeeds = seenSeeds(loaded, state);
  for (const s of o.excludeSeeds ?? []) trainingSeeds.add(s);
  return evaluate({
    task: o.task,
    episodes: o.episodes,
    numEnvs: o.envs,
    seed: o.seed,
    sandbox: o.sandbox,
    emit: o.emit,
    onEpisode: o.onEpisode,
    trainingSeeds,
    workers: o.workers,
    act: sampledActions(loaded.net, loaded.file.numActions, o.seed),
  });
}

/**
 * Evaluates a trained run's policy (with the run's reward copy) on `episodes` more held-out worlds from the
 * evaluation stream of `seed`, never on a world it trained on or one in `excludeSeeds` (e.g. the worlds of its
 * earlier evaluations), and writes the episode records to `out`. The improvement loop's extra evaluations.
 */
export async function evaluateCheckpoint(o: {
  runDir: string;
  task: TaskSpec;
  episodes: number;
  seed: number;
  excludeSeeds: Iterable<number>;
  out: string;
  backend?: BackendChoice;
}): Promise<{ summary: EvalSummary; episodes: EpisodeRecord[] }> {
  const backend = await ensureBackend(o.backend ?? 'auto');
  const dir = resolveCheckpointDir(o.runDir);
  // Every file read stays inside the run folder: its checkpoint and its reward copy, whose checked text is compiled.
  const copy = readRunRewardCopy(o.runDir);
  if (!copy) throw new RunRecordError(`${runRewardCopy(o.runDir)}: no such file (the run's copy of its reward)`);
  const loaded = loadNetwork(dir, engineOf(backend), o.runDir);
  const state = checkpointState(dir, o.runDir);
  const envs = Math.min(EVAL_ENVS, o.episodes);
  let sandbox: RewardSandbox | null = null;
  try {
    sandbox = await RewardSandbox.open(copy.file, envs, { attack: o.task.attack, episodeSteps: o.task.maxSteps, source: copy.text });
    const result = await evaluatePolicy(loaded, state, { task: o.task, episodes: o.episodes, envs, seed: o.seed, sandbox, excludeSeeds: o.excludeSeeds });
    mkdirSync(o.out, { recursive: true });
    writeEvalRecords(o.out, result.episodes);
    return { summary: result.summary, episodes: result.episodes };
  } finally {
    await sandbox?.close();
    loaded.net.dispose();
  }
}

/** The `eval` event: summary.json's `eval`, its generalisation gap and, for a fine-tuned run, whether it ended below its start. */
export function evalEvent(e: EvalSummary, gap: GeneralisationGap | null, below: BelowStart | null = null): RunnerEvent {
  return makeEvent({ type: 'eval', ...e, generalisation_gap: gap, below_start: below });
}
