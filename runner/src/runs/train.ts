// `rewardsmith train` / `rewardsmith eval`, and the programmatic `train()` the improvement loop calls.
// One run folder holds everything: the reward copy, metrics.ndjson (one line per PPO update), the latest
// checkpoint (policy, optimizer, random streams, env seeds, metrics position: enough to resume after a
// SIGKILL with no metric line lost or repeated), the evaluation records and summary.json.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { appendNoFollow, writeAtomic } from '../files';
import { GAME_FACTS, type StepObservation } from '../schema';
import { resolveTask, type TaskSpec } from '../tasks';
import { createEnv } from '../env/index';
import { nextEpisodeSeed } from '../seeds';
import type { VecEnv } from '../env/types';
import { RewardError, RewardSandbox } from '../reward/index';
import { makeEvent, type ProgressEvent, type RunnerEvent } from '../events';
import { checkpointHeldOut, metricsCsv, readSummary, RUN_FILES, rewardCopyName, runRewardCopy } from '../records';
import type { EpisodeRecord, RateRecord, RunSummary, UpdateMetrics } from '../records';
import { compareRates, formatDifference, formatRate, formatRateShort } from '../stats';
import { CommandError, noteRunFolder, parseCommandArgs, requireExisting, runCommand, terminalText, UsageError } from '../args';
import { ensureBackend, BACKEND_CHOICES, type BackendChoice } from '../ppo/backend';
import {
  DEFAULT_CHECKPOINT_EVERY,
  DEFAULT_ENVS,
  DEFAULT_ROLLOUT_STEPS,
  DEFAULT_STEPS,
  MAX_ENVS,
  parseTrainArgs,
  writeStoredConfig,
  type TrainConfig,
} from './config';
import { Rng, resolveCheckpointDir, sampleActions, savePolicy, type PolicyNetwork } from '../ppo/policy';
import { DEFAULT_HYPERPARAMETERS, explainedVariance, ReturnNormaliser, RolloutBuffer, type PpoHyperparameters } from '../ppo/ppo';
import { createLearner, engineOf, loadNetwork, newNetwork, restoreOptimizer, saveOptimizer, type Learner } from '../ppo/learner';
import { measured, measuredAsync, type PhaseProfile } from '../ppo/profile';
import { DEFAULT_EVAL_EPISODES, evaluate, summarise, trainingStreamSeed, writeEvalRecords, type EvalSummary } from './evaluate';
import { EpisodeRecorder } from './recorder';
import { progressBar, stageProgressText } from './progress';
import { generalisationGap, TrainingSuccess, type TrainingSuccessState } from './training-success';

export { loadPolicy, type LoadedPolicy } from '../ppo/learner';

export { DEFAULT_CHECKPOINT_EVERY, DEFAULT_ENVS, DEFAULT_ROLLOUT_STEPS, DEFAULT_STEPS } from './config';
// Training episodes whose mean return makes up the return curve (success: training-success.ts).
const CURVE_WINDOW = 100;
// Evaluation batch: enough envs to keep the workers busy, few enough that little runs past the last episode.
const EVAL_ENVS = 25;

/** Options of `train()` (the CLI flags map one to one). */
export interface TrainOptions {
  /** The `*.reward.ts` file. On resume it may be omitted (the run's copy is used). */
  rewardFile?: string;
  /** Built-in task id, task file path, or a task. On resume it may be omitted. */
  task?: string | TaskSpec;
  /** Training frames (env steps summed over envs). Default 256,000. */
  steps?: number;
  seed?: number;
  /** Run folder. */
  out: string;
  /** Parallel environments (one policy batch). Default 32. */
  envs?: number;
  /** Network engine (TensorFlow.js backend or the fused JS network). Default auto. */
  backend?: BackendChoice;
  /** Start from this checkpoint's policy and add the KL term to it (the paper's frozen initial policy). */
  init?: string;
  /** Continue the run in `out` from its last checkpoint. */
  resume?: boolean;
  /** Replace a run already in `out` (otherwise that is an error). */
  overwrite?: boolean;
  /** Held-out evaluation episodes after training (0 skips evaluation). Default 100. */
  evalEpisodes?: number;
  /** Parallel envs of the held-out evaluation (default 25; long episodes such as explore-diamond's 60,000
   * steps go faster with every episode in one batch). */
  evalEnvs?: number;
  /** Env worker threads (default: the env module's choice). */
  workers?: number;
  /** Steps per env per rollout. Default 64. */
  rolloutSteps?: number;
  /** Write a checkpoint every this many updates (and always at the end). Default 4. */
  checkpointEvery?: number;
  hyperparameters?: Partial<PpoHyperparameters>;
  /** The effective configuration to store in the run (`config.json`); built from these options when absent. */
  config?: TrainConfig;
  /** Receives the run's events (the same objects `--events ndjson` prints). */
  emit?: (e: RunnerEvent) => void;
  /** Called during evaluation with episodes done / total (the CLI's progress bar). */
  onEvalEpisode?: (done: number, total: number) => void;
  /**
   * Analysis of training episodes while training runs: called every LIVE_ANALYSIS_EVERY updates with the most
   * recent finished training episodes; the events it returns (provisional `suggestion`s) are emitted. The
   * analyzer sits above runs/, so the command line passes it in.
   */
  liveAnalysis?: LiveAnalysis;
  /** Charged with each phase of the training loop's time (the bench's profile). */
  profile?: PhaseProfile;
}

/**
 * The check a reward passes before anything is trained or written (lint and probes, which sit above runs/: the
 * command line passes it in): the diagnostics to print, one per line, and how many are errors.
 */
export type RewardGate = (rewardFile: string, task: TaskSpec) => Promise<{ report: string[]; errors: number }>;

export type LiveAnalysis = (window: EpisodeRecord[], at: { frames: number; totalFrames: number; task: TaskSpec; rewardFile: string }) => Promise<RunnerEvent[]>;

// Training episodes the live analysis looks at (the most recent finished ones), and how often it runs.
const LIVE_WINDOW = 64;
const LIVE_ANALYSIS_EVERY = 8;

/** `checkpoint/state.json`: everything besides the weights needed to continue exactly. */
interface TrainState {
  version: 1;
  task: string;
  /** The task file (absolute) of a task that is not built in (absent: a built-in id, or an older checkpoint). */
  taskFile?: string;
  rewardFile: string;
  rewardSha256: string;
  seed: number;
  totalFrames: number;
  numEnvs: number;
  rolloutSteps: number;
  hyperparameters: PpoHyperparameters;
  init: string | null;
  frames: number;
  update: number;
  metricsLines: number;
  wallSeconds: number;
  rng: number;
  /** Seed of the episode each env is in; a resumed run restarts those worlds. */
  envSeeds: number[];
  trainingSeeds: number[];
  normaliser: { runningAbsReturn: number; initialised: boolean };
  recent: { ret: number; success: boolean }[];
  /** The training-success estimate's episodes (absent in checkpoints written before it existed). */
  successCurve?: TrainingSuccessState;
  episodes: number;
  lastStats: { policyLoss: number; valueLoss: number; entropy: number; kl: number; fps: number };
}

const CHECKPOINT_TMP = `${RUN_FILES.checkpoint}.tmp`;
const CHECKPOINT_OLD = `${RUN_FILES.checkpoint}.old`;

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** A run folder's records disagree with its checkpoint, or a checkpoint file is damaged; names the file. */
export class RunFilesError extends Error {
  override readonly name = 'RunFilesError';
}

/**
 * Reads the newest complete checkpoint of a run (a SIGKILL between the renames leaves the old one) and checks
 * it before anything trusts it: state.json parses and has its counters, the optimizer's bytes match its layout.
 */
function readCheckpoint(runDir: string): { dir: string; state: TrainState } | null {
  for (const name of [RUN_FILES.checkpoint, CHECKPOINT_OLD]) {
    const dir = path.join(runDir, name);
    const file = path.join(dir, 'state.json');
    if (!existsSync(file)) continue;
    const damaged = (what: string) =>
      new RunFilesError(`${what}; the checkpoint is damaged — start the run again with --overwrite (or copy a good checkpoint over it)`);
    let state: TrainState;
    try {
      state = JSON.parse(readFileSync(file, 'utf8')) as TrainState;
    } catch (err) {
      throw damaged(`${file}: truncated or not JSON (${(err as Error).message})`);
    }
    for (const key of ['frames', 'update', 'metricsLines', 'totalFrames', 'numEnvs', 'rolloutSteps', 'seed', 'rng'] as const) {
      if (typeof state?.[key] !== 'number') throw damaged(`${file}: "${key}" is missing or not a number`);
    }
    if (!Array.isArray(state.envSeeds) || state.envSeeds.length !== state.numEnvs) throw damaged(`${file}: "envSeeds" does not hold one seed per env`);
    const layoutFile = path.join(dir, 'optimizer.json');
    const bytesFile = path.join(dir, 'optimizer.bin');
    if (!existsSync(layoutFile)) throw damaged(`${layoutFile}: missing`);
    if (!existsSync(bytesFile)) throw damaged(`${bytesFile}: missing`);
    let layout: { shape: number[] }[];
    try {
      layout = JSON.parse(readFileSync(layoutFile, 'utf8')) as { shape: number[] }[];
    } catch (err) {
      throw damaged(`${layoutFile}: truncated or not JSON (${(err as Error).message})`);
    }
    const expected = 4 * layout.reduce((sum, w) => sum + w.shape.reduce((a, b) => a * b, 1), 0);
    const actual = statSync(bytesFile).size;
    if (actual !== expected) throw damaged(`${bytesFile}: ${actual} bytes, but optimizer.json describes ${expected}`);
    return { dir, state };
  }
  return null;
}

/** metrics.ndjson must hold every update the checkpoint has counted, or the curve would silently lose them. */
function checkMetricsAgainstCheckpoint(metricsFile: string, state: TrainState): void {
  const lines = existsSync(metricsFile)
    ? readFileSync(metricsFile, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
    : [];
  if (lines.length < state.metricsLines) {
    throw new RunFilesError(
      `${metricsFile}: ${lines.length} line(s), but the checkpoint has counted ${state.metricsLines} update(s): ` +
        `the file was truncated or replaced, so resuming would lose updates ${lines.length + 1}–${state.metricsLines} from the curve. ` +
        'Restore the file, or start the run again with --overwrite',
    );
  }
  lines.slice(0, state.metricsLines).forEach((l, i) => {
    try {
      JSON.parse(l);
    } catch {
      throw new RunFilesError(`${metricsFile}:${i + 1}: not valid JSON, inside the part the checkpoint has counted`);
    }
  });
}

async function writeCheckpoint(runDir: string, task: string, learner: Learner, state: TrainState): Promise<void> {
  const tmp = path.join(runDir, CHECKPOINT_TMP);
  rmSync(tmp, { recursive: true, force: true });
  savePolicy(learner.net, tmp, task);
  await saveOptimizer(tmp, learner);
  writeAtomic(path.join(tmp, 'state.json'), JSON.stringify(state) + '\n');
  const current = path.join(runDir, RUN_FILES.checkpoint),
    old = path.join(runDir, CHECKPOINT_OLD);
  rmSync(old, { recursive: true, force: true });
  if (existsSync(current)) renameSync(current, old);
  renameSync(tmp, current);
  rmSync(old, { recursive: true, force: true });
}

/** Keeps the first `lines` lines of metrics.ndjson: updates after the checkpoint are redone on resume. */
function truncateMetrics(file: string, lines: number): void {
  if (!existsSync(file)) {
    writeAtomic(file, '');
    return;
  }
  const kept = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(0, lines);
  writeAtomic(file, kept.map((l) => l + '\n').join(''));
}

/**
 * Trains PPO on a reward file, evaluates on held-out worlds and writes the run folder; returns summary.json.
 * Throws a RewardError (located in the reward file) when the reward fails, after emitting `reward_error`.
 */
export async function train(options: TrainOptions): Promise<RunSummary> {
  const runDir = path.resolve(options.out);
  const emit = options.emit ?? (() => {});
  const hasCheckpoint = [RUN_FILES.checkpoint, CHECKPOINT_OLD].some((name) => existsSync(path.join(runDir, name, 'state.json')));
  const previous = options.resume ? readCheckpoint(runDir) : null;
  if (options.resume && !previous) {
    throw new RunFilesError(
      `${runDir} has no checkpoint to resume from (its training stopped before writing one): start it again with the same command without --resume — there is nothing to lose`,
    );
  }
  if (!options.resume && existsSync(path.join(runDir, RUN_FILES.metrics))) {
    if (hasCheckpoint && !options.overwrite)
      throw new Error(`${runDir} already holds a run; pass --resume to continue it, --overwrite to replace it, or choose another --out`);
    if (!hasCheckpoint && !options.overwrite) {
      emit(
        makeEvent({
          type: 'log',
          level: 'info',
          message: `${runDir}: the earlier training stopped before its first checkpoint, so there is nothing to resume or lose; starting it again`,
        }),
      );
    }
    for (const name of [
      RUN_FILES.checkpoint,
      CHECKPOINT_TMP,
      CHECKPOINT_OLD,
      RUN_FILES.metrics,
      RUN_FILES.metricsCsv,
      RUN_FILES.summary,
      path.dirname(RUN_FILES.episodes),
      RUN_FILES.suggestions,
      RUN_FILES.report,
    ]) {
      rmSync(path.join(runDir, name), { recursive: true, force: true });
    }
  }
  if (previous) checkMetricsAgainstCheckpoint(path.join(runDir, RUN_FILES.metrics), previous.state);
  const rewardCopy = previous || !options.rewardFile ? runRewardCopy(runDir) : path.join(runDir, rewardCopyName(options.rewardFile));
  let state: TrainState;
  let task: TaskSpec;
  if (previous) {
    state = previous.state;
    task = options.task === undefined ? resolveTask(state.taskFile ?? state.task) : typeof options.task === 'string' ? resolveTask(options.task) : options.task;
    if (task.id !== state.task) throw new Error(`${runDir} was trained on ${state.task}, not ${task.id}`);
    if (options.rewardFile && sha256(options.rewardFile) !== state.rewardSha256) {
      throw new Error(`${options.rewardFile} changed since the run started; resume trains the copy in ${rewardCopy}, or start a new run`);
    }
  } else {
    if (!options.rewardFile) throw new Error('a reward file is required');
    if (options.task === undefined) throw new Error('a task is required (--task)');
    task = typeof options.task === 'string' ? resolveTask(options.task) : options.task;
    const seed = options.seed ?? 0;
    const numEnvs = options.envs ?? DEFAULT_ENVS;
    state = {
      version: 1,
      task: task.id,
      ...(task.file ? { taskFile: task.file } : {}),
      rewardFile: path.resolve(options.rewardFile),
      rewardSha256: sha256(options.rewardFile),
      seed,
      totalFrames: options.steps ?? DEFAULT_STEPS,
      numEnvs,
      rolloutSteps: options.rolloutSteps ?? DEFAULT_ROLLOUT_STEPS,
      hyperparameters: { ...DEFAULT_HYPERPARAMETERS, ...options.hyperparameters },
      init: options.init ? path.resolve(options.init) : null,
      frames: 0,
      update: 0,
      metricsLines: 0,
      wallSeconds: 0,
      rng: seed ^ 0x5eed5,
      envSeeds: Array.from({ length: numEnvs }, (_, i) => trainingStreamSeed(seed, i)),
      trainingSeeds: [],
      normaliser: { runningAbsReturn: 0, initialised: false },
      recent: [],
      episodes: 0,
      lastStats: { policyLoss: 0, valueLoss: 0, entropy: 0, kl: 0, fps: 0 },
    };
    state.trainingSeeds.push(...state.envSeeds);
    mkdirSync(runDir, { recursive: true });
    writeAtomic(rewardCopy, readFileSync(options.rewardFile));
    writeStoredConfig(
      runDir,
      options.config ?? {
        task: typeof options.task === 'string' ? options.task : task.id,
        steps: state.totalFrames,
        seed,
        envs: numEnvs,
        backend: options.backend ?? 'auto',
        init: state.init,
        evalEpisodes: options.evalEpisodes ?? DEFAULT_EVAL_EPISODES,
        workers: options.workers ?? null,
        rolloutSteps: state.rolloutSteps,
        checkpointEvery: options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY,
        hyperparameters: state.hyperparameters,
        configFile: null,
      },
    );
  }
  const backend = await ensureBackend(options.backend ?? 'auto');
  const metricsFile = path.join(runDir, RUN_FILES.metrics);
  truncateMetrics(metricsFile, state.metricsLines);

  emit(
    makeEvent({
      type: 'started',
      command: 'train',
      task: task.id,
      reward_file: state.rewardFile,
      run_dir: runDir,
      backend: backend.name,
      env: 'sim',
      total_frames: state.totalFrames,
      num_envs: state.numEnvs,
      resumed_from_frames: state.frames,
    }),
  );

  // Older runs' state lacks hyperparameters added since: they trained with the defaults.
  const hp = (state.hyperparameters = { ...DEFAULT_HYPERPARAMETERS, ...state.hyperparameters });
  const rng = new Rng(state.rng);
  const n = state.numEnvs;
  const trainingSeeds = new Set(state.trainingSeeds);
  const normaliser = new ReturnNormaliser(state.normaliser.runningAbsReturn, state.normaliser.initialised);
  const successCurve = new TrainingSuccess(n, undefined, state.successCurve);
  let env: VecEnv | null = null;
  let sandbox: RewardSandbox | null = null;
  let learner: Learner | null = null;
  let initNet: PolicyNetwork | null = null;
  const engine = engineOf(backend);
  const profile = options.profile;
  // The reward sandbox unrefs its host process, so awaiting its exit alone would let Node quit mid-run.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    // The reward copy is what trains: the user may edit the original while the run goes on.
    sandbox = await RewardSandbox.open(rewardCopy, n, { attack: task.attack, episodeSteps: task.maxSteps });
    env = await createEnv({ task, numEnvs: n, seed: state.seed, workers: options.workers });
    const config = { featureSize: env.featureSize, numActions: GAME_FACTS.actions.length, hidden: [64, 64] };
    const net = previous ? loadNetwork(previous.dir, engine).net : newNetwork(engine, config, new Rng(state.seed ^ 0x1417));
    learner = createLearner(engine, net, hp.learningRate);
    if (previous) await restoreOptimizer(previous.dir, learner);
    if (state.init) {
      const loaded = loadNetwork(resolveCheckpointDir(state.init), engine);
      if (loaded.file.featureSize !== env.featureSize) {
        throw new Error(`--init ${state.init} was trained with ${loaded.file.featureSize} features (${loaded.file.task}); ${task.id} has ${env.featureSize}`);
      }
      initNet = loaded.net;
      if (!previous) net.setWeights(initNet.weights());
      // Worlds the initial policy learned from (demonstrations) are not held out for this run either.
      for (const s of loaded.file.worldSeeds ?? []) trainingSeeds.add(s);
    }
    if (net.config.featureSize !== env.featureSize) throw new Error(`the checkpoint has ${net.config.featureSize} features; the env has ${env.featureSize}`);

    const reset = await env.reset(state.envSeeds);
    await sandbox.beginEpisodes(
      Array.from({ length: n }, (_, i) => i),
      reset.obs,
    );
    let features = reset.features;
    // Training episodes in the analyzer's format, only when someone analyses them while training runs.
    const recorder = options.liveAnalysis ? new EpisodeRecorder(sandbox.compiled.exportsKind) : null;
    let recordedEpisodes = state.episodes;
    const liveWindow: EpisodeRecord[] = [];
    reset.obs.forEach((o, i) => recorder?.begin(i, state.envSeeds[i]!, recordedEpisodes++, o));
    const episodeReturn = new Float64Array(n);
    const buffer = new RolloutBuffer(state.rolloutSteps, n, env.featureSize);
    const wallBefore = state.wallSeconds;
    const segmentStart = Date.now();

    while (state.frames < state.totalFrames) {
      const updateStart = Date.now();
      const steps = Math.min(state.rolloutSteps, Math.ceil((state.totalFrames - state.frames) / n));
      const finished: { ret: number; success: boolean }[] = [];
      let evaluated = measured(profile, 'act: policy forward', () => net.evaluate(features, n));
      for (let t = 0; t < steps; t++) {
        const { probs, values } = evaluated;
        const row = t * n;
        const actions = measured(profile, 'act: sample + buffer', () => {
          const actions = sampleActions(probs, n, config.numActions, rng);
          buffer.features.set(features, row * env!.featureSize);
          for (let i = 0; i < n; i++) {
            buffer.actions[row + i] = actions[i]!;
            buffer.logProbs[row + i] = Math.log(Math.max(probs[i * config.numActions + actions[i]!]!, 1e-8));
            buffer.values[row + i] = values[i]!;
          }
          return actions;
        });
        const res = await measuredAsync(profile, 'env step (wait for workers)', () => env!.step(actions));
        const doneEnvs: number[] = [],
          firstObs: StepObservation[] = [];
        res.info.forEach((info, i) => {
          if (!info.done) return;
          doneEnvs.push(i);
          firstObs.push(res.resetObs[i]!);
        });
        // The reward host works while this thread evaluates the policy on the next features.
        const rewardsPending = sandbox.step(res.obs).then(async (r) => {
          await sandbox!.beginEpisodes(doneEnvs, firstObs);
          return r;
        });
        rewardsPending.catch(() => {});
        features = res.features;
        evaluated = measured(profile, 'act: policy forward', () => net.evaluate(features, n));
        const rewards = await measuredAsync(profile, 'reward (wait for sandbox)', () => rewardsPending);
        for (let i = 0; i < n; i++) {
          buffer.rewards[row + i] = rewards[i]!;
          buffer.dones[row + i] = res.info[i]!.done ? 1 : 0;
          episodeReturn[i] += rewards[i]!;
          recorder?.step(i, actions[i]!, rewards[i]!, res.obs[i]!, res.info[i]!);
        }
        for (const i of doneEnvs) {
          if (recorder) {
            const record = recorder.finish(i, res.obs[i]!, res.info[i]!);
            if (record) liveWindow.push(record);
            if (liveWindow.length > LIVE_WINDOW) liveWindow.shift();
            recorder.begin(i, nextEpisodeSeed(state.envSeeds[i]!, i), recordedEpisodes++, res.resetObs[i]!);
          }
          finished.push({ ret: episodeReturn[i]!, success: res.info[i]!.success });
          successCurve.end(i, state.frames + n, res.info[i]!.success, episodeReturn[i]!);
          episodeReturn[i] = 0;
          state.envSeeds[i] = nextEpisodeSeed(state.envSeeds[i]!, i);
          trainingSeeds.add(state.envSeeds[i]!);
        }
        buffer.length = t + 1;
        state.frames += n;
      }
      normaliser.update(
        finished.map((e) => e.ret),
        hp.returnMomentum,
      );
      measured(profile, 'GAE', () => buffer.computeAdvantages(evaluated.values, hp.normaliseReturns ? normaliser.scale : 1, hp.gamma, hp.lambda));
      const valueOnly = initNet !== null && state.update < hp.valuePretrainUpdates;
      // How much of the returns' variance the value function explains, before the update changes it.
      const explained = explainedVariance(buffer);
      const stats = measured(profile, 'PPO update', () => learner!.update(buffer, hp, rng, { initNet, valueOnly, profile }));
      state.update++;
      state.episodes += finished.length;
      state.recent = [...state.recent, ...finished].slice(-CURVE_WINDOW);
      const meanReturn = state.recent.length ? state.recent.reduce((s, e) => s + e.ret, 0) / state.recent.length : 0;
      const success = successCurve.estimate();
      const successRate = success.rate;
      const fps = (steps * n) / Math.max(1e-3, (Date.now() - updateStart) / 1000);
      state.wallSeconds = wallBefore + (Date.now() - segmentStart) / 1000;
      // From the first update on: the episodes that ended in it, and the partial returns of those still running
      // (a long-episode task may finish none for many updates; the curves say which is which).
      const finishedReturn = finished.length ? finished.reduce((s, e) => s + e.ret, 0) / finished.length : null;
      const unfinishedReturn = episodeReturn.reduce((s, r) => s + r, 0) / n;
      const metrics: UpdateMetrics = {
        update: state.update,
        frames: state.frames,
        fps,
        mean_return: meanReturn,
        success_rate: successRate,
        success,
        episodes: state.episodes,
        finished_episodes: finished.length,
        finished_return: finishedReturn,
        unfinished_return: unfinishedReturn,
        policy_loss: stats.policyLoss,
        value_loss: stats.valueLoss,
        entropy: stats.entropy,
        kl: stats.kl,
        approx_kl: stats.approxKl,
        clip_fraction: stats.clipFraction,
        explained_variance: Number.isFinite(explained) ? explained : null,
        learning_rate: hp.learningRate,
        wall_seconds: state.wallSeconds,
      };
      appendNoFollow(metricsFile, JSON.stringify(metrics) + '\n');
      state.metricsLines = state.update;
      state.lastStats = { policyLoss: stats.policyLoss, valueLoss: stats.valueLoss, entropy: stats.entropy, kl: stats.kl, fps };
      emit(makeEvent({ type: 'progress', ...metrics, total_frames: state.totalFrames }));
      if (options.liveAnalysis && state.update % LIVE_ANALYSIS_EVERY === 0 && state.frames < state.totalFrames && liveWindow.some((e) => !e.success)) {
        for (const e of await options.liveAnalysis([...liveWindow], {
          frames: state.frames,
          totalFrames: state.totalFrames,
          task,
          rewardFile: state.rewardFile,
        }))
          emit(e);
      }
      if (state.update % (options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY) === 0 || state.frames >= state.totalFrames) {
        state.rng = rng.state;
        state.normaliser = { runningAbsReturn: normaliser.runningAbsReturn, initialised: normaliser.initialised };
        state.trainingSeeds = [...trainingSeeds];
        state.successCurve = successCurve.state();
        await measuredAsync(profile, 'checkpoint + metrics', async () => {
          await writeCheckpoint(runDir, task.id, learner!, state);
          writeMetricsCsv(metricsFile, path.join(runDir, RUN_FILES.metricsCsv));
        });
      }
    }
    await env.close();
    env = null;

    // Held-out evaluation with the same reward sandbox (fresh episodes).
    const evalEpisodes = options.evalEpisodes ?? DEFAULT_EVAL_EPISODES;
    if (evalEpisodes > 0) options.onEvalEpisode?.(0, evalEpisodes);
    const evalEnvs = Math.max(1, Math.min(options.evalEnvs ?? options.config?.evalEnvs ?? Math.min(n, EVAL_ENVS), evalEpisodes));
    await sandbox.close();
    sandbox = null;
    let result: Awaited<ReturnType<typeof evaluate>> | null = null;
    if (evalEpisodes > 0) {
      sandbox = await RewardSandbox.open(rewardCopy, evalEnvs, { attack: task.attack, episodeSteps: task.maxSteps });
      const policy = net;
      const evalRng = new Rng(state.seed ^ 0xe7a1);
      result = await evaluate({
        task,
        episodes: evalEpisodes,
        numEnvs: evalEnvs,
        seed: state.seed,
        trainingSeeds,
        workers: options.workers,
        emit,
        sandbox,
        onEpisode: options.onEvalEpisode,
        act: (f, k) => sampleActions(policy.evaluate(f, k).probs, k, config.numActions, evalRng),
      });
    }
    const trainSuccess = successCurve.estimate();
    const gap = result ? generalisationGap(trainSuccess, result.summary.success) : null;
    if (result) {
      writeEvalRecords(runDir, result.episodes);
      emit(evalEvent(result.summary, gap));
    }
    const recent = state.recent;
    const summary: RunSummary = {
      task: task.id,
      task_file: task.file ?? null,
      reward_file: state.rewardFile,
      reward_sha256: state.rewardSha256,
      seed: state.seed,
      env: 'sim',
      env_steps: state.frames,
      // Training (all segments of a resumed run) plus this segment's evaluation.
      wall_seconds: wallBefore + (Date.now() - segmentStart) / 1000,
      backend: backend.name,
      train: {
        updates: state.update,
        frames: state.frames,
        mean_return: recent.length ? recent.reduce((s, e) => s + e.ret, 0) / recent.length : 0,
        success_rate: trainSuccess.rate,
        success: trainSuccess,
        entropy: state.lastStats.entropy,
        fps: state.lastStats.fps,
      },
      eval: result?.summary ?? summarise([]),
      generalisation_gap: gap,
    };
    const summaryFile = path.join(runDir, RUN_FILES.summary);
    writeAtomic(summaryFile, JSON.stringify(summary, null, 2) + '\n');
    emit(makeEvent({ type: 'finished', ok: true, run_dir: runDir, summary: summaryFile }));
    return summary;
  } catch (caught) {
    let err = caught;
    if (err instanceof RewardError) {
      // The run trains its copy of the reward; point the user at the file they edit while it is unchanged.
      if (path.resolve(err.file) === rewardCopy && existsSync(state.rewardFile) && sha256(state.rewardFile) === state.rewardSha256) {
        err = new RewardError(err.kind, state.rewardFile, err.line, err.column, err.detail, err.env);
      }
      const e = err as RewardError;
      emit(makeEvent({ type: 'reward_error', file: e.file, line: e.line, column: e.column, kind: e.kind, message: e.detail }));
    }
    emit(makeEvent({ type: 'finished', ok: false, run_dir: runDir, summary: null, error: err instanceof Error ? err.message : String(err) }));
    throw err;
  } finally {
    await env?.close();
    await sandbox?.close();
    learner?.net.dispose();
    learner?.dispose();
    initNet?.dispose();
    clearInterval(keepAlive);
  }
}

function evalEvent(e: EvalSummary, gap: ReturnType<typeof generalisationGap>): RunnerEvent {
  return makeEvent({ type: 'eval', ...e, generalisation_gap: gap });
}

/** metrics.csv beside metrics.ndjson, rewritten from it (at each checkpoint and at the end). */
function writeMetricsCsv(metricsFile: string, csvFile: string): void {
  const lines = readFileSync(metricsFile, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as UpdateMetrics);
  writeAtomic(csvFile, metricsCsv(lines));
}

// ---- command line ----

const EVAL_SPEC = {
  command: 'eval',
  summary: `Evaluates a checkpoint (a run folder or its checkpoint/ folder) on K held-out worlds and writes DIR/summary.json and
DIR/eval/. The reward (for the recorded per-step rewards) defaults to the run's copy.`,
  positionals: 'CHECKPOINT',
  minPositionals: 1,
  maxPositionals: 1,
  options: {
    out: { type: 'string', valueName: 'DIR', description: 'output folder' },
    task: { type: 'string', valueName: 'TASK', description: "task id or task file (default: the checkpoint's task)" },
    episodes: { type: 'int', min: 1, max: 100_000, default: DEFAULT_EVAL_EPISODES, description: 'held-out episodes' },
    reward: { type: 'string', valueName: 'FILE', description: "reward file (default: the run's copy)" },
    seed: { type: 'int', min: 0, max: 2 ** 31 - 1, description: "evaluation seed (default: the run's seed)" },
    envs: { type: 'int', min: 1, max: MAX_ENVS, default: EVAL_ENVS, description: 'environments stepped in a batch' },
    backend: { type: 'string', choices: BACKEND_CHOICES, default: 'auto', description: 'network engine (see train --help)' },
    workers: { type: 'int', min: 0, max: 256, description: 'env worker threads' },
    events: { type: 'string', choices: ['ndjson'], description: 'print one JSON event per line on stdout instead of the progress bar' },
  },
} as const;

/** Where the CLI's output goes: ndjson events on stdout, or a progress bar and messages on stderr. */
class Reporter {
  private lastDraw = 0;
  private lastLoggedTenth = -1;
  private evalStart = 0;
  private evalLoggedTenth = -1;
  private readonly tty = Boolean(process.stderr.isTTY);

  constructor(readonly events: boolean) {}

  emit = (e: RunnerEvent): void => {
    if (this.events) {
      process.stdout.write(JSON.stringify(e) + '\n');
      return;
    }
    if (e.type === 'started') {
      const resumed = e.resumed_from_frames ? `, resuming at ${e.resumed_from_frames.toLocaleString('en-US')} frames` : '';
      const frames = e.command === 'eval' ? '' : `${e.total_frames.toLocaleString('en-US')} frames, `;
      process.stderr.write(
        `${e.command} ${e.task} with ${e.reward_file ? path.relative(process.cwd(), e.reward_file) : '(no reward)'}: ${frames}${e.num_envs} envs, backend ${e.backend}${resumed}\n`,
      );
    } else if (e.type === 'progress') {
      this.bar(e);
    } else if (e.type === 'reward_error') {
      this.clear();
    } else if (e.type === 'log') {
      this.clear();
      process.stderr.write(`${e.level}: ${terminalText(e.message)}\n`);
    }
  };

  private bar(e: ProgressEvent): void {
    const fraction = Math.min(1, e.frames / e.total_frames);
    // Returns from the first update: of the episodes that ended in it, else the partial return of those running.
    const ret =
      typeof e.finished_return === 'number'
        ? `return ${e.finished_return.toFixed(2)} (${e.finished_episodes} ended)`
        : `${e.episodes === 0 ? 'no episode finished yet' : 'none ended in this update'}, return so far ${(e.unfinished_return ?? 0).toFixed(2)}`;
    const success =
      e.success_rate !== null
        ? `${(e.success_rate * 100).toFixed(0)}% [${(e.success.ci95[0] * 100).toFixed(0)}–${(e.success.ci95[1] * 100).toFixed(0)}] of ${e.success.n}`
        : e.episodes === 0
          ? '—'
          : `— (${e.episodes} finished; no window of started episodes has ended)`;
    const text = `${progressBar(fraction)} ${(fraction * 100).toFixed(0).padStart(3)}%  ${e.frames.toLocaleString('en-US')}/${e.total_frames.toLocaleString('en-US')} frames  ${Math.round(e.fps)} fps  ${ret}  success ${success}`;
    if (this.tty) {
      const now = Date.now();
      if (now - this.lastDraw < 100 && fraction < 1) return;
      this.lastDraw = now;
      process.stderr.write(`\r${text}\x1b[K${fraction >= 1 ? '\n' : ''}`);
    } else {
      // Not a terminal (CI, a pipe): one line per tenth of the run.
      const tenth = Math.floor(fraction * 10);
      if (tenth === this.lastLoggedTenth) return;
      this.lastLoggedTenth = tenth;
      process.stderr.write(text + '\n');
    }
  }

  /** Evaluation's own bar: episodes done of the total, and the time left at the pace so far. */
  evalProgress = (done: number, total: number): void => {
    if (this.events) return;
    if (done === 0) {
      this.evalStart = Date.now();
      this.evalLoggedTenth = -1;
      process.stderr.write(`evaluating on ${total} held-out worlds\n`);
      return;
    }
    const text = evalProgressText(done, total, (Date.now() - this.evalStart) / 1000);
    if (this.tty) {
      process.stderr.write(`\r${text}\x1b[K${done >= total ? '\n' : ''}`);
      return;
    }
    const tenth = Math.floor((done / total) * 10);
    if (tenth === this.evalLoggedTenth) return;
    this.evalLoggedTenth = tenth;
    process.stderr.write(text + '\n');
  };

  clear(): void {
    if (!this.events && this.tty) process.stderr.write('\r\x1b[K');
  }
}

/** "[#####...] evaluating 37/100 episodes  0:21 elapsed, ETA 0:36" (ETA from the pace of the episodes done). */
export function evalProgressText(done: number, total: number, elapsedSeconds: number): string {
  return stageProgressText('evaluating', done, total, 'episodes', elapsedSeconds);
}

/**
 * The result table printed at the end of `train` and `eval`, and by the bench: held-out and training success
 * with their episode counts and 95 % intervals (one definition: summary.json), then any generalisation gap.
 */
export function resultTable(rows: { task: string; reward: string; summary: RunSummary }[]): string {
  const rate = (r: RateRecord | undefined) => (r ? formatRateShort(r) : '—');
  const header = ['task', 'reward', 'held-out success % [95 % CI] (n)', 'train success % [95 % CI] (n)', 'death %', 'avg steps', 'frames', 'wall s', 'backend'];
  const body = rows.map(({ task, reward, summary: s }) => [
    task,
    reward,
    rate(s.eval.success),
    rate(s.train.success),
    rate(s.eval.death),
    s.eval.avg_steps.toFixed(0),
    s.env_steps.toLocaleString('en-US'),
    s.wall_seconds.toFixed(0),
    s.backend,
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...body.map((r) => r[c]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(' | ')} |`;
  const gaps = rows.flatMap(({ task, reward, summary: s }) => (s.generalisation_gap ? [`warning: ${task} ${reward}: ${s.generalisation_gap.message}`] : []));
  return [
    line(header),
    `|${widths.map((w, c) => (c < 2 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|')}|`,
    ...body.map(line),
    ...(gaps.length ? ['', ...gaps] : []),
  ].join('\n');
}

/**
 * "warning: held-out success … is below its starting policy's …" when a fine-tuned run is worse than the checkpoint
 * it started from (its own held-out evaluation) by the decision rule (one-sided 5 %); null otherwise or unknown.
 */
export function belowStartingPolicy(summary: RunSummary, init: string): string | null {
  const start = checkpointHeldOut(init);
  if (!start || !summary.eval?.success || summary.eval.episodes === 0) return null;
  const difference = compareRates(summary.eval.success, start);
  if (difference.verdict !== 'worse') return null;
  return `warning: held-out success ${formatRate(summary.eval.success)} is below its starting policy's ${formatRate(start)} (${init}): ${formatDifference(difference)}; fine-tuning on this reward lost ground.`;
}

/**
 * A reward error as the user needs it: file:line:column, kind and message (the rest: the common format). A
 * sandbox host that died (kind `host`) is not the reward's fault: `again` says how to carry on.
 */
function asCommandError(err: unknown, reporter: Reporter, again: string): unknown {
  reporter.clear();
  if (err instanceof RewardError)
    return new CommandError(
      `reward error (${err.kind}) at ${err.file}:${err.line}:${err.column}: ${terminalText(err.detail)}${err.env === null ? '' : ` (env ${err.env})`}` +
        (err.kind === 'host' ? `; the reward is not at fault: ${again}` : ''),
    );
  return err;
}

/**
 * The summary of a run whose training and evaluation have both finished (its checkpoint counts every frame and
 * summary.json is written); null for a run with anything left to do. `--resume` on it has nothing to resume.
 */
export function finishedRun(runDir: string): RunSummary | null {
  const checkpoint = readCheckpoint(runDir);
  if (!checkpoint || checkpoint.state.frames < checkpoint.state.totalFrames) return null;
  const summary = readSummary(runDir);
  return summary?.train && summary.eval && summary.env_steps >= checkpoint.state.totalFrames ? summary : null;
}

export async function trainCommand(argv: string[], hooks: { liveAnalysis?: LiveAnalysis; gate?: RewardGate } = {}): Promise<number> {
  let reporter = new Reporter(false);
  return runCommand('train', async () => {
    const inv = parseTrainArgs(argv);
    reporter = new Reporter(inv.events);
    const c = inv.config;
    const finished = inv.resume ? finishedRun(inv.out) : null;
    if (finished) {
      // Resuming it would only evaluate the policy again and overwrite its results: say so instead.
      const message =
        `${path.resolve(inv.out)} has finished: ${finished.train.frames.toLocaleString('en-US')} of ${finished.train.frames.toLocaleString('en-US')} frames trained ` +
        `and ${finished.eval.episodes} held-out episodes evaluated; nothing to resume. Evaluate it again with ` +
        `\`rewardsmith eval ${inv.out} --episodes N --out DIR\`, or train longer in a new run (--init ${path.join(inv.out, RUN_FILES.checkpoint)}).`;
      reporter.emit(makeEvent({ type: 'log', level: 'info', message }));
      reporter.emit(makeEvent({ type: 'finished', ok: true, run_dir: path.resolve(inv.out), summary: path.join(path.resolve(inv.out), RUN_FILES.summary) }));
      if (!reporter.events) {
        const reward = finished.reward_file ? path.basename(finished.reward_file) : '-';
        process.stdout.write(`${resultTable([{ task: finished.task, reward, summary: finished }])}\n`);
      }
      return 0;
    }
    if (hooks.gate && inv.check && !inv.resume && inv.rewardFile && existsSync(inv.rewardFile))
      await checkBeforeTraining(hooks.gate, inv.rewardFile, c.task, reporter, inv.out);
    try {
      const summary = await train({
        rewardFile: inv.rewardFile,
        task: c.task || undefined,
        steps: c.steps,
        seed: c.seed,
        out: inv.out,
        envs: c.envs,
        backend: c.backend,
        init: c.init ?? undefined,
        resume: inv.resume,
        overwrite: inv.overwrite,
        evalEpisodes: c.evalEpisodes,
        workers: c.workers ?? undefined,
        rolloutSteps: c.rolloutSteps,
        checkpointEvery: c.checkpointEvery,
        hyperparameters: c.hyperparameters,
        config: c,
        emit: reporter.emit,
        onEvalEpisode: reporter.evalProgress,
        // Streamed suggestions are for editors reading events; the terminal gets the analysis after evaluation.
        liveAnalysis: reporter.events ? hooks.liveAnalysis : undefined,
      });
      if (!reporter.events) {
        const reward = summary.reward_file ? path.basename(summary.reward_file) : '-';
        const below = c.init ? belowStartingPolicy(summary, c.init) : null;
        process.stdout.write(
          `\n${resultTable([{ task: summary.task, reward, summary }])}\n${below ? `\n${below}\n` : ''}\nrun folder: ${path.resolve(inv.out)}\n`,
        );
      }
      noteRunFolder(inv.out, reporter.events);
      return 0;
    } catch (err) {
      throw asCommandError(err, reporter, 'the same command with --resume continues from the last checkpoint');
    }
  });
}

/** Seeds a checkpoint must not be evaluated on: its run's training worlds and its initial policy's demonstration worlds. */
function seenSeeds(loaded: ReturnType<typeof loadNetwork>, state: TrainState | null): Set<number> {
  return new Set([...(state?.trainingSeeds ?? []), ...(loaded.file.worldSeeds ?? [])]);
}

/** The held-out evaluation of a loaded policy (what `eval` and `evaluateCheckpoint` share). */
function evaluatePolicy(
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
  const rng = new Rng(o.seed ^ 0xe7a1);
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
    act: (f, k) => sampleActions(loaded.net.evaluate(f, k).probs, k, loaded.file.numActions, rng),
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
  const loaded = loadNetwork(dir, engineOf(backend));
  const stateFile = path.join(dir, 'state.json');
  const state = existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as TrainState) : null;
  const envs = Math.min(EVAL_ENVS, o.episodes);
  let sandbox: RewardSandbox | null = null;
  try {
    sandbox = await RewardSandbox.open(runRewardCopy(o.runDir), envs, { attack: o.task.attack, episodeSteps: o.task.maxSteps });
    const result = await evaluatePolicy(loaded, state, { task: o.task, episodes: o.episodes, envs, seed: o.seed, sandbox, excludeSeeds: o.excludeSeeds });
    mkdirSync(o.out, { recursive: true });
    writeEvalRecords(o.out, result.episodes);
    return { summary: result.summary, episodes: result.episodes };
  } finally {
    await sandbox?.close();
    loaded.net.dispose();
  }
}

/**
 * Refuses a reward the check finds errors in, before the run folder exists (exit 1, the diagnostics on stderr, the
 * first error in the message for a sweep job's one line, a `finished` event with check_errors for an editor).
 */
async function checkBeforeTraining(gate: RewardGate, rewardFile: string, taskName: string, reporter: Reporter, out: string): Promise<void> {
  const { report, errors } = await gate(rewardFile, resolveTask(taskName));
  for (const line of report) process.stderr.write(`${line}\n`);
  if (errors > 0) {
    const first = report.find((line) => /:\d+:\d+.*\berror\b/.test(line));
    const message = `${rewardFile}: ${errors} error(s) found before training (above${first ? `; the first: ${first.trim()}` : ''}), so nothing was trained or written; fix them, or pass --no-check to train anyway`;
    reporter.emit(makeEvent({ type: 'finished', ok: false, run_dir: path.resolve(out), summary: null, error: message, check_errors: errors }));
    throw new CommandError(message);
  }
}

export async function evalCommand(argv: string[]): Promise<number> {
  return runCommand('eval', () => evalMain(argv));
}

async function evalMain(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseCommandArgs(EVAL_SPEC, argv);
  const reporter = new Reporter(v.events === 'ndjson');
  if (!v.out) throw new UsageError('--out DIR is required');
  const checkpoint = requireExisting(positionals[0]!, 'checkpoint or run folder');
  let sandbox: RewardSandbox | null = null;
  let net: PolicyNetwork | null = null;
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    const dir = resolveCheckpointDir(checkpoint);
    const backend = await ensureBackend(v.backend as BackendChoice);
    const loaded = loadNetwork(dir, engineOf(backend));
    net = loaded.net;
    const state = existsSync(path.join(dir, 'state.json')) ? (JSON.parse(readFileSync(path.join(dir, 'state.json'), 'utf8')) as TrainState) : null;
    const task = resolveTask(v.task ?? state?.taskFile ?? loaded.file.task);
    const runCopy = runRewardCopy(path.join(dir, '..'));
    const rewardFile = v.reward ?? (existsSync(runCopy) ? runCopy : state?.rewardFile);
    if (v.reward !== undefined && !existsSync(v.reward)) throw new UsageError(`--reward ${v.reward}: no such file`);
    // A checkpoint from `pretrain` has no reward: its evaluation counts successes and records no rewards.
    const hasReward = rewardFile !== undefined && existsSync(rewardFile);
    if (!hasReward && state) throw new UsageError('no reward file for the checkpoint; pass --reward FILE');
    const episodes = v.episodes;
    const seed = v.seed ?? state?.seed ?? 0;
    const numEnvs = Math.min(v.envs, episodes);
    const runDir = path.resolve(v.out);
    mkdirSync(runDir, { recursive: true });
    const start = Date.now();
    reporter.emit(
      makeEvent({
        type: 'started',
        command: 'eval',
        task: task.id,
        reward_file: hasReward ? path.resolve(rewardFile) : null,
        run_dir: runDir,
        backend: backend.name,
        env: 'sim',
        total_frames: 0,
        num_envs: numEnvs,
        resumed_from_frames: 0,
      }),
    );
    sandbox = hasReward ? await RewardSandbox.open(rewardFile, numEnvs, { attack: task.attack, episodeSteps: task.maxSteps }) : null;
    reporter.evalProgress(0, episodes);
    const result = await evaluatePolicy(loaded, state, {
      task,
      episodes,
      envs: numEnvs,
      seed,
      sandbox,
      emit: reporter.emit,
      onEpisode: reporter.evalProgress,
      workers: v.workers,
    });
    writeEvalRecords(runDir, result.episodes);
    const trainSuccess = new TrainingSuccess(state?.numEnvs ?? 1, undefined, state?.successCurve).estimate();
    const gap = generalisationGap(trainSuccess, result.summary.success);
    const summary: RunSummary = {
      task: task.id,
      task_file: task.file ?? null,
      reward_file: hasReward ? path.resolve(rewardFile) : null,
      reward_sha256: hasReward ? sha256(rewardFile) : null,
      seed,
      env: 'sim',
      env_steps: state?.frames ?? 0,
      wall_seconds: (Date.now() - start) / 1000,
      backend: backend.name,
      train: {
        updates: state?.update ?? 0,
        frames: state?.frames ?? 0,
        mean_return: state?.recent.length ? state.recent.reduce((s, e) => s + e.ret, 0) / state.recent.length : 0,
        success_rate: trainSuccess.rate,
        success: trainSuccess,
        entropy: state?.lastStats.entropy ?? 0,
        fps: state?.lastStats.fps ?? 0,
      },
      eval: result.summary,
      generalisation_gap: gap,
    };
    const summaryFile = path.join(runDir, RUN_FILES.summary);
    writeAtomic(summaryFile, JSON.stringify(summary, null, 2) + '\n');
    reporter.emit(evalEvent(result.summary, gap));
    reporter.emit(makeEvent({ type: 'finished', ok: true, run_dir: runDir, summary: summaryFile }));
    if (!reporter.events)
      process.stdout.write(
        `\n${resultTable([{ task: task.id, reward: hasReward ? path.basename(rewardFile) : '(none)', summary }])}\n\nrun folder: ${runDir}\n`,
      );
    noteRunFolder(runDir, reporter.events);
    return 0;
  } catch (err) {
    if (err instanceof RewardError)
      reporter.emit(makeEvent({ type: 'reward_error', file: err.file, line: err.line, column: err.column, kind: err.kind, message: err.detail }));
    reporter.emit(
      makeEvent({ type: 'finished', ok: false, run_dir: path.resolve(v.out), summary: null, error: err instanceof Error ? err.message : String(err) }),
    );
    throw asCommandError(err, reporter, 'run the evaluation again');
  } finally {
    await sandbox?.close();
    net?.dispose();
    clearInterval(keepAlive);
  }
}
