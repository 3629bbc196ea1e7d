// Evaluation on held-out worlds: run a policy for K episodes on seeds disjoint from training, with the
// reward in its sandbox (so records carry the rewards the agent saw), and write the run's evaluation records
// in the analyzer's format (last 32 steps, final state, full path).

import path from 'node:path';
import { makeFolder, writeAtomic } from '../files';
import type { TaskSpec } from '../tasks';
import type { StepObservation } from '../schema';
import { HOLD_ACTION, splitStepOf, type SplitStepVecEnv, type StepInfo, type VecEnv, type VecStepResult } from '../env/types';
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
import { resolveCheckpointDir, Rng, sampleActions, type PolicyFile, type PolicyNetwork } from '../ppo/policy';
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
  /**
   * One action per env for numEnvs × featureSize features. `held` marks rows whose action is not used (held envs:
   * they hold whatever `act` gives); an `act` may leave them out of its forward pass, as long as it draws for them
   * as if it acted for them (`sampledActions`).
   */
  act: (features: Float32Array, numEnvs: number, held?: Uint8Array) => Int32Array;
  /**
   * `act` on a batch gives what it gives on consecutive slices of it, acted on in order (a row's action depends on
   * its features and on the draws made before it, never on the batch's size): the evaluation then acts for the
   * envs in two parts and steps one part while it works on the other.
   */
  rowwiseAct?: boolean;
  sandbox: RewardSandbox | null;
  workers?: number;
  emit?: (e: RunnerEvent) => void;
  onEpisode?: (done: number, total: number) => void;
}

export type EvalSummary = RunSummary['eval'];

export async function evaluate(opts: EvaluateOptions): Promise<{ summary: EvalSummary; episodes: EpisodeRecord[]; frames: number }> {
  const n = Math.max(1, Math.min(opts.numEnvs, opts.episodes));
  const callerWork = opts.rowwiseAct ? (opts.sandbox ? PIPELINE_CALLER_WORK : PIPELINE_CALLER_WORK_NO_REWARD) : undefined;
  const env: VecEnv = await createEnv({ task: opts.task, numEnvs: n, seed: opts.seed, workers: opts.workers, callerWork });
  try {
    const book = new EpisodeBook(n, opts);
    const firstSeeds = Array.from({ length: n }, (_, i) => {
      let attempt = 0,
        s = evalStreamSeed(opts.seed, i);
      while (!book.heldOut(s)) s = evalStreamSeed(opts.seed, i, ++attempt);
      return s;
    });
    const reset = await env.reset(firstSeeds);
    reset.obs.forEach((o, i) => book.begin(i, firstSeeds[i]!, book.number(i, firstSeeds[i]!), o));
    await opts.sandbox?.beginEpisodes(
      reset.obs.map((_, i) => i),
      reset.obs,
    );
    const split = opts.rowwiseAct ? splitStepOf(env) : null;
    await (split ? runPipelined(split, book, reset.features, opts) : runEpisodes(env, book, reset.features, opts));
    const episodes = book.episodes.sort((a, b) => a.episode - b.episode);
    return { summary: summarise(episodes), episodes, frames: book.frames };
  } finally {
    await env.close();
  }
}

/**
 * The calling thread's own work per env when the evaluation is pipelined, as a fraction of an env's step: it
 * requests the rewards (the reward host runs while it waits), acts and records for all envs, so the worker takes
 * the larger share. 0.08 gives 11 of 25 envs to the calling thread (one worker). Measured in each thread's CPU
 * (/proc, 2 × Intel Xeon 2.5 GHz, 2026-11-27; `rewardsmith eval` of a 65,536-frame dense approach-tree
 * checkpoint, 100 episodes): at 0.34 (8 envs here) the evaluation took 19.1 CPU s of this thread (start-up
 * included) against the worker's 29.8, so this thread waited ~10 s for it; its work besides its envs was ~4 CPU s
 * (about 0.09 of an env's step per env); at 0.08 the two threads used 25.3 and 24.7 CPU s. The evaluation's wall
 * time moved less than that (4 pairs with no other session running: 37.1 / 38.0 / 40.4 / 52.7 → 36.0 / 32.1 /
 * 53.5 / 45.8 s): in lock-step each thread still waits for the other every step (docs/speed-log.md).
 */
const PIPELINE_CALLER_WORK = 0.08;
/**
 * The same without a reward (`pretrain`'s evaluation of the foundation): the calling thread only acts and records,
 * and the worker waits for it while it acts for the worker's envs, so the calling thread keeps the share whole
 * steps give it (48 of 100 envs). At 0.05 (46 envs) or 0.08 (44) the worker's part is the longer one: the
 * foundation's 100 episodes are 91,136 env-steps in envs [0, 48) and 99,755 in [48, 100) (seed 0), so each env
 * the calling thread gives up lengthens every step of the worker's part by ~1 %.
 */
const PIPELINE_CALLER_WORK_NO_REWARD = 0;

/** What an evaluation counts and records, step by step: which episodes count, in what order, and their records. */
class EpisodeBook {
  readonly episodes: EpisodeRecord[] = [];
  /** An env whose episode does not count once all counted episodes have started is held (not stepped): nothing
   * it does can count any more. The others step as before (each env's worlds, actions and rewards are its own). */
  readonly held: Uint8Array;
  readonly recorder: EpisodeRecorder;
  frames = 0;
  private started = 0;
  private readonly counted: Uint8Array;

  constructor(
    n: number,
    private readonly opts: EvaluateOptions,
  ) {
    this.held = new Uint8Array(n);
    this.counted = new Uint8Array(n);
    this.recorder = new EpisodeRecorder(opts.sandbox?.compiled.exportsKind ?? null);
  }

  heldOut(seed: number): boolean {
    return !this.opts.trainingSeeds.has(seed);
  }

  get complete(): boolean {
    return this.episodes.length >= this.opts.episodes;
  }

  /**
   * The number of the episode env i starts on `seed`, or -1 if it does not count. Counted episodes are numbered
   * in the order envs start them (env index order within a step); an env whose new episode does not count once
   * all have started is held from now on.
   */
  number(i: number, seed: number): number {
    const counted = this.started < this.opts.episodes && this.heldOut(seed);
    const episode = counted ? this.started++ : -1;
    if (!counted && this.started >= this.opts.episodes) this.held[i] = 1;
    return episode;
  }

  begin(i: number, seed: number, episode: number, obs: StepObservation): void {
    this.recorder.begin(i, seed, episode, obs, episode >= 0);
    this.counted[i] = episode >= 0 ? 1 : 0;
  }

  /** Env i's current episode counts (its end adds a record). */
  counts(i: number): boolean {
    return this.counted[i] === 1;
  }

  /** The seed env i has auto-reset onto after its episode ended (the same rule the simulator applies). */
  nextSeed(i: number): number {
    return nextEpisodeSeed(this.recorder.seedOf(i), i);
  }

  /** Records env i's step; at the end of a counted episode, its record. */
  step(i: number, action: number, reward: number, obs: StepObservation, info: StepInfo): void {
    this.recorder.step(i, action, reward, obs, info);
    if (!info.done) return;
    const record = this.recorder.finish(i, obs, info);
    if (!record) return;
    this.episodes.push(record);
    this.opts.onEpisode?.(this.episodes.length, this.opts.episodes);
    if (!record.success) {
      this.opts.emit?.(
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

  /** Actions for envs [first, first + count) from their features (held envs hold). */
  act(features: Float32Array, first: number, count: number): Int32Array {
    const actions = this.opts.act(features, count, this.held.subarray(first, first + count));
    for (let r = 0; r < count; r++) if (this.held[first + r]) actions[r] = HOLD_ACTION;
    return actions;
  }
}

/** The envs of [first, first + count) that these actions step (not held), as env indices. */
function steppedEnvs(actions: Int32Array, first: number): number[] {
  const stepped: number[] = [];
  for (let r = 0; r < actions.length; r++) if (actions[r] !== HOLD_ACTION) stepped.push(first + r);
  return stepped;
}

/** Whole steps: act for every env, step them all, reward, record. */
async function runEpisodes(env: VecEnv, book: EpisodeBook, firstFeatures: Float32Array, opts: EvaluateOptions): Promise<void> {
  let features = firstFeatures;
  while (!book.complete) {
    const actions = book.act(features, 0, env.numEnvs);
    const stepped = steppedEnvs(actions, 0);
    const res = await env.step(actions);
    book.frames += stepped.length;
    const rewards = await stepRewards(
      opts.sandbox,
      stepped,
      stepped.map((i) => res.obs[i]!),
      env.numEnvs,
    );
    const done: number[] = [];
    stepped.forEach((i, k) => {
      book.step(i, actions[i]!, rewards[k]!, res.obs[i]!, res.info[i]!);
      if (!res.info[i]!.done) return;
      const start = numberStart(book, i);
      book.begin(i, start.seed, start.episode, res.resetObs[i]!);
      done.push(i);
    });
    await beginEpisodes(
      opts.sandbox,
      done,
      done.map((i) => res.resetObs[i]!),
    );
    features = res.features;
  }
}

/** A part's step: its results, the actions that made it, the envs they stepped and the episodes its done envs start. */
interface PartStep {
  first: number;
  res: VecStepResult;
  actions: Int32Array;
  stepped: number[];
  /** The episode each done env starts, numbered (and holds decided) as soon as the part's step is taken. */
  starts: Map<number, { seed: number; episode: number }>;
}

/**
 * The same steps, pipelined over the two parts of a split env: part B, envs [0, k), stepped in this thread, and
 * part A, envs [k, n), stepped by a worker. While the worker steps A(t), this thread records step t − 1 (B's
 * envs, then A's), numbers B(t)'s new episodes and acts for B(t+1); then it takes A(t), numbers A's new episodes,
 * acts for A(t+1) and starts it at once; it requests the rewards of B(t) and A(t) together (one round trip to the
 * reward host per step, as whole steps make), begins the reward's new episodes and steps B(t+1) while the reward
 * host computes. Everything a whole step orders stays in its order: actions are drawn for B(t+1) before
 * A(t+1) (env order, as one batch draws them; `rowwiseAct`), episodes are numbered and recorded B's before A's,
 * and the reward host gets the calls of B(t) and A(t) in env order, the episodes begun at t, then those of
 * B(t+1) and A(t+1); so the records are those of runEpisodes, byte for byte. Nothing is stepped or rewarded past
 * the step that completes the evaluation (known when A's part is numbered), except the worker's last step, never read.
 */
async function runPipelined(env: SplitStepVecEnv, book: EpisodeBook, firstFeatures: Float32Array, opts: EvaluateOptions): Promise<void> {
  const n = env.numEnvs,
    k = env.localEnvs,
    f = env.featureSize;
  /** Numbers the episodes a part's done envs start; returns how many counted episodes it finishes. */
  const numberStarts = (part: PartStep): number => {
    let finishing = 0;
    for (const i of part.stepped) {
      if (!part.res.info[i - part.first]!.done) continue;
      if (book.counts(i)) finishing++;
      part.starts.set(i, numberStart(book, i));
    }
    return finishing;
  };
  /** Records a part's step with its rewards (from `offset` in them); its done envs begin their numbered episodes. */
  const record = (part: PartStep, rewards: Float64Array, offset: number) => {
    part.stepped.forEach((i, j) => {
      const r = i - part.first;
      book.step(i, part.actions[r]!, rewards[offset + j]!, part.res.obs[r]!, part.res.info[r]!);
      if (!part.res.info[r]!.done) return;
      const start = part.starts.get(i)!;
      book.begin(i, start.seed, start.episode, part.res.resetObs[r]!);
    });
    book.frames += part.stepped.length;
  };
  const stepB = (actions: Int32Array): PartStep => ({ first: 0, res: env.stepLocal(actions), actions, stepped: steppedEnvs(actions, 0), starts: new Map() });

  if (book.complete) return;
  const firstB = book.act(firstFeatures.subarray(0, k * f), 0, k);
  let actionsA = book.act(firstFeatures.subarray(k * f), k, n - k);
  env.startRemoteStep(actionsA);
  let partB = stepB(firstB);
  let pending: { rewards: Promise<Float64Array>; partB: PartStep; partA: PartStep } | null = null;
  let begun: Promise<void> = Promise.resolve();
  for (;;) {
    if (pending) recordBoth(await pending.rewards, pending.partB, pending.partA);
    let finishing = book.episodes.length + numberStarts(partB);
    const actionsB = book.act(partB.res.features, 0, k);

    const partA: PartStep = { first: k, res: await env.finishRemoteStep(), actions: actionsA, stepped: steppedEnvs(actionsA, k), starts: new Map() };
    // A's new episodes are numbered (and holds decided) now, after B's, as a whole step numbers them, so that
    // A's next actions go to the worker before the rewards come.
    finishing += numberStarts(partA);
    actionsA = book.act(partA.res.features, k, n - k);
    env.startRemoteStep(actionsA);
    const stepped = [...partB.stepped, ...partA.stepped];
    const rewards = stepRewards(
      opts.sandbox,
      stepped,
      stepped.map((i) => (i < k ? partB.res.obs[i]! : partA.res.obs[i - k]!)),
      n,
    );
    rewards.catch(() => undefined); // taken (and thrown) where it is awaited; meanwhile it is not unhandled
    const done = stepped.filter((i) => (i < k ? partB : partA).starts.has(i));
    await begun;
    begun = beginEpisodes(
      opts.sandbox,
      done,
      done.map((i) => (i < k ? partB.res.resetObs[i]! : partA.res.resetObs[i - k]!)),
    );
    begun.catch(() => undefined);
    pending = { rewards, partB, partA };
    if (finishing >= opts.episodes) break;
    partB = stepB(actionsB);
  }
  recordBoth(await pending.rewards, pending.partB, pending.partA);
  await begun;
  // The worker's last step (started before the evaluation knew it was complete) is taken when the env closes.

  /** Records B's part of a step, then A's, with the rewards of both (B's first). */
  function recordBoth(rewards: Float64Array, b: PartStep, a: PartStep): void {
    record(b, rewards, 0);
    record(a, rewards, b.stepped.length);
  }
}

/** Numbers the episode env i has auto-reset into. */
function numberStart(book: EpisodeBook, i: number): { seed: number; episode: number } {
  const seed = book.nextSeed(i);
  return { seed, episode: book.number(i, seed) };
}

/** The rewards of the stepped envs' observations, in their order (0 without a reward). */
async function stepRewards(sandbox: RewardSandbox | null, envs: number[], obs: StepObservation[], numEnvs: number): Promise<Float64Array> {
  if (!sandbox) return new Float64Array(envs.length);
  if (envs.length === numEnvs) return sandbox.step(obs);
  return (await sandbox.stepEnvs(envs, obs)).values;
}

/** Starts the reward's episodes of envs that have just reset. */
async function beginEpisodes(sandbox: RewardSandbox | null, envs: number[], firstObs: StepObservation[]): Promise<void> {
  if (sandbox && envs.length > 0) await sandbox.beginEpisodes(envs, firstObs);
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
  writeAtomic(runDir, path.join(runDir, RUN_FILES.episodes), episodes.map((e) => JSON.stringify(e)).join('\n') + (episodes.length ? '\n' : ''));
  writeAtomic(
    runDir,
    path.join(runDir, RUN_FILES.failedEpisodes),
    JSON.stringify(
      episodes.filter((e) => !e.success),
      null,
      1,
    ) + '\n',
  );
}

/**
 * A policy's actions in evaluation: sampled from its probabilities (`actionProbs`: the fused network leaves its value
 * head, which acting does not use, out of the forward pass) with the evaluation stream of `seed`. A network
 * whose rows are independent (`rowsIndependent`) evaluates only the rows of envs not held; a held env's row
 * still takes its draw (one per row), so every other row gets the draw a whole batch gives it and the same
 * action. (As the last episodes run, most of the 25 envs are held: ~26 % of an approach-tree evaluation's rows.)
 */
export function sampledActions(net: PolicyNetwork, numActions: number, seed: number): EvaluateOptions['act'] {
  const rng = new Rng(seed ^ 0xe7a1);
  return (features, numEnvs, held) => {
    if (!held || !net.rowsIndependent || !held.includes(1)) return sampleActions(net.actionProbs(features, numEnvs), numEnvs, numActions, rng);
    const f = features.length / numEnvs;
    const live: number[] = [];
    for (let r = 0; r < numEnvs; r++) if (!held[r]) live.push(r);
    const rows = new Float32Array(live.length * f);
    live.forEach((r, j) => rows.set(features.subarray(r * f, (r + 1) * f), j * f));
    const probs = live.length > 0 ? net.actionProbs(rows, live.length) : new Float32Array(0);
    const actions = new Int32Array(numEnvs).fill(HOLD_ACTION);
    for (let r = 0, j = 0; r < numEnvs; r++) {
      if (held[r]) rng.next();
      else (actions[r] = sampleActions(probs.subarray(j * numActions, (j + 1) * numActions), 1, numActions, rng)[0]!), j++;
    }
    return actions;
  };
}

/** A policy to evaluate: its network, and what its checkpoint's policy.json says of its actions and demonstration worlds. */
export interface EvaluatedPolicy {
  net: PolicyNetwork;
  file: Pick<PolicyFile, 'numActions' | 'worldSeeds'>;
}

/** Seeds a checkpoint must not be evaluated on: its run's training worlds and its initial policy's demonstration worlds. */
function seenSeeds(loaded: EvaluatedPolicy, state: TrainState | null): Set<number> {
  return new Set([...(state?.trainingSeeds ?? []), ...(loaded.file.worldSeeds ?? [])]);
}

/**
 * The held-out evaluation of a policy (what `eval`, `evaluateCheckpoint` and `pretrain` share): actions sampled
 * with `sampledActions`, pipelined when the network's rows are independent (`rowwiseAct`).
 */
export function evaluatePolicy(
  loaded: EvaluatedPolicy,
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
    rowwiseAct: loaded.net.rowsIndependent,
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
    // Made before evaluating, so that a link in its place is refused before the work rather than after.
    makeFolder(o.out);
    sandbox = await RewardSandbox.open(copy.file, envs, { attack: o.task.attack, episodeSteps: o.task.maxSteps, source: copy.text });
    const result = await evaluatePolicy(loaded, state, { task: o.task, episodes: o.episodes, envs, seed: o.seed, sandbox, excludeSeeds: o.excludeSeeds });
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
