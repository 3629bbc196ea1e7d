// `train()`: PPO on a reward file, then the held-out evaluation, into one run folder (the reward copy,
// metrics.ndjson one line per PPO update, the checkpoint, the evaluation records and summary.json). The run
// folder and checkpoint are run-folder.ts's, the rollout collect.ts's; the `train` and `eval` commands are
// train-command.ts and eval-command.ts. Programs (the loop, `table`, the bench) import this module.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { appendNoFollow, isInsideFolder, writeAtomic } from '../files';
import { UsageError } from '../args';
import { GAME_FACTS } from '../schema';
import { resolveTask, type TaskSpec } from '../tasks';
import { createEnv } from '../env/index';
import type { VecEnv } from '../env/types';
import { RewardError, RewardSandbox } from '../reward/index';
import { makeEvent, type RunnerEvent } from '../events';
import {
  readRunRewardCopy,
  RUN_FILES,
  rewardCopyName,
  rewardCopyOf,
  runRewardCopy,
  sha256Hex,
  type EpisodeRecord,
  type RewardCopy,
  type RunSummary,
  type UpdateMetrics,
} from '../records';
import { ensureBackend, type BackendChoice } from '../ppo/backend';
import { DEFAULT_CHECKPOINT_EVERY, DEFAULT_ENVS, DEFAULT_ROLLOUT_STEPS, DEFAULT_STEPS, writeStoredConfig, type TrainConfig } from './config';
import { float32Bytes, Rng, resolveCheckpointDir, type PolicyNetwork } from '../ppo/policy';
import { DEFAULT_HYPERPARAMETERS, explainedVariance, ReturnNormaliser, RolloutBuffer, type PpoHyperparameters } from '../ppo/ppo';
import { createLearner, engineOf, loadNetwork, newNetwork, restoreOptimizer, type Learner } from '../ppo/learner';
import { measured, measuredAsync, type PhaseProfile } from '../ppo/profile';
import { DEFAULT_EVAL_EPISODES, EVAL_ENVS, evalEvent, type evaluate, evaluatePolicy, summarise, trainingStreamSeed, writeEvalRecords } from './evaluate';
import { RecentEpisodes, RolloutCollector, type Rollout } from './collect';
import {
  checkMetricsAgainstCheckpoint,
  clearRun,
  hasCheckpoint,
  readCheckpoint,
  RunFilesError,
  sha256,
  trainingEpisodes,
  trainingSummary,
  truncateMetrics,
  writeCheckpoint,
  writeMetricsCsv,
  type TrainState,
} from './run-folder';
import { belowStart, generalisationGap, TrainingSuccess } from './training-success';

export { loadPolicy, type LoadedPolicy } from '../ppo/learner';
export { DEFAULT_CHECKPOINT_EVERY, DEFAULT_ENVS, DEFAULT_ROLLOUT_STEPS, DEFAULT_STEPS } from './config';
export { evaluateCheckpoint } from './evaluate';
export { belowStartingPolicy } from './reporter';
export { RunFilesError } from './run-folder';

// Training episodes whose mean return makes up the return curve (success: training-success.ts).
const CURVE_WINDOW = 100;

/** Options of `train()` (the CLI flags map one to one). */
export interface TrainOptions {
  /** The `*.reward.ts` file. On resume it may be omitted (the run's copy is used). */
  rewardFile?: string;
  /**
   * The sha256 of the reward text a caller checked (the loop's screened candidate, a sweep's copy): the run trains
   * only that text, and refuses, naming the file, when the file (or on resume the run's copy) holds another.
   */
  rewardSha256?: string;
  /**
   * The reward file's bytes as the caller read them for its check before training (`train`'s gate): a new run
   * trains and copies these, not a second read of the file that a swap between the check and training could change.
   */
  rewardBytes?: Buffer;
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
  /** Where training episodes end (a time-limit cut, bootstrapped); held-out evaluation keeps the task's limit.
   * Default: the task's `trainEpisodeSteps`, else its `maxSteps`. */
  trainEpisodeSteps?: number;
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
export type RewardGate = (reward: { file: string; text: string }, task: TaskSpec) => Promise<{ report: string[]; errors: number }>;

export type LiveAnalysis = (
  window: EpisodeRecord[],
  at: { frames: number; totalFrames: number; task: TaskSpec; reward: { file: string; text: string } },
) => Promise<RunnerEvent[]>;

// Training episodes the live analysis looks at (the most recent finished ones), and how often it runs.
const LIVE_WINDOW = 64;
const LIVE_ANALYSIS_EVERY = 8;

/**
 * Trains PPO on a reward file, evaluates on held-out worlds and writes the run folder; returns summary.json.
 * Throws a RewardError (located in the reward file) when the reward fails, after emitting `reward_error`.
 */
export async function train(options: TrainOptions): Promise<RunSummary> {
  const runDir = path.resolve(options.out);
  const emit = options.emit ?? (() => {});
  const { state, task, previous, reward } = openRun(options, runDir, emit);
  const rewardCopy = reward.file;
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
  let policies: Policies | null = null;
  const profile = options.profile;
  // The reward sandbox unrefs its host process, so awaiting its exit alone would let Node quit mid-run.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    // Training episodes end at the run's limit; the held-out evaluation below runs `task` to its own.
    const trainingTask = trainingEpisodes(task, state);
    // The reward copy is what trains: the user may edit the original while the run goes on.
    sandbox = await RewardSandbox.open(rewardCopy, n, { attack: task.attack, episodeSteps: trainingTask.maxSteps, source: reward.text });
    env = await createEnv({ task: trainingTask, numEnvs: n, seed: state.seed, workers: options.workers });
    policies = await startPolicies(engineOf(backend), env.featureSize, state, task, previous?.dir ?? null, options.init);
    const { learner, initNet } = policies;
    // Worlds the initial policy learned from (demonstrations) are not held out for this run either.
    for (const s of policies.initWorldSeeds) trainingSeeds.add(s);
    const recent = options.liveAnalysis ? new RecentEpisodes(sandbox.compiled.exportsKind, state.episodes, LIVE_WINDOW) : null;
    const buffer = new RolloutBuffer(state.rolloutSteps, n, env.featureSize);
    const collector = await RolloutCollector.start({
      env,
      sandbox,
      net: learner.net,
      numActions: GAME_FACTS.actions.length,
      rng,
      buffer,
      progress: state,
      trainingSeeds,
      successCurve,
      recent,
      profile,
    });
    const wallBefore = state.wallSeconds;
    const segmentStart = Date.now();

    while (state.frames < state.totalFrames) {
      const updateStart = Date.now();
      const steps = Math.min(state.rolloutSteps, Math.ceil((state.totalFrames - state.frames) / n));
      const rollout = await collector.collect(steps);
      normaliser.update(
        rollout.finished.map((e) => e.ret),
        hp.returnMomentum,
      );
      measured(profile, 'GAE', () => buffer.computeAdvantages(rollout.lastValues, hp.normaliseReturns ? normaliser.scale : 1, hp.gamma, hp.lambda));
      const valueOnly = initNet !== null && state.update < hp.valuePretrainUpdates;
      // How much of the returns' variance the value function explains, before the update changes it.
      const explained = explainedVariance(buffer);
      const stats = measured(profile, 'PPO update', () => learner.update(buffer, hp, rng, { initNet, valueOnly, profile }));
      state.wallSeconds = wallBefore + (Date.now() - segmentStart) / 1000;
      const metrics = countUpdate(state, rollout, {
        stats,
        explained,
        successCurve,
        unfinishedReturn: collector.unfinishedReturn(),
        fps: (steps * n) / Math.max(1e-3, (Date.now() - updateStart) / 1000),
      });
      appendNoFollow(metricsFile, JSON.stringify(metrics) + '\n');
      state.metricsLines = state.update;
      emit(makeEvent({ type: 'progress', ...metrics, total_frames: state.totalFrames }));
      if (options.liveAnalysis && state.update % LIVE_ANALYSIS_EVERY === 0 && state.frames < state.totalFrames && recent!.window.some((e) => !e.success)) {
        const at = { frames: state.frames, totalFrames: state.totalFrames, task, reward: { file: editedFile(options, reward), text: reward.text } };
        for (const e of await options.liveAnalysis([...recent!.window], at)) emit(e);
      }
      if (state.update % (options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY) === 0 || state.frames >= state.totalFrames) {
        state.rng = rng.state;
        state.normaliser = { runningAbsReturn: normaliser.runningAbsReturn, initialised: normaliser.initialised };
        state.trainingSeeds = [...trainingSeeds];
        state.successCurve = successCurve.state();
        await measuredAsync(profile, 'checkpoint + metrics', async () => {
          await writeCheckpoint(runDir, task.id, learner, state);
          writeMetricsCsv(metricsFile, path.join(runDir, RUN_FILES.metricsCsv));
        });
      }
    }
    await env.close();
    env = null;
    await sandbox.close();
    sandbox = null;
    const result = await heldOutEvaluation(options, { task, state, net: learner.net, trainingSeeds, reward, emit });
    const trainSuccess = successCurve.estimate();
    const gap = result ? generalisationGap(trainSuccess, result.summary.success, { train: trainingTask.maxSteps, heldOut: task.maxSteps }) : null;
    const below = result && state.init ? belowStart(result.summary.success, state.init) : null;
    if (result) {
      writeEvalRecords(runDir, result.episodes);
      emit(evalEvent(result.summary, gap, below));
    }
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
      train: trainingSummary(state, trainSuccess),
      eval: result?.summary ?? summarise([]),
      generalisation_gap: gap,
      below_start: below,
    };
    const summaryFile = path.join(runDir, RUN_FILES.summary);
    writeAtomic(runDir, summaryFile, JSON.stringify(summary, null, 2) + '\n');
    emit(makeEvent({ type: 'finished', ok: true, run_dir: runDir, summary: summaryFile }));
    return summary;
  } catch (caught) {
    const err = reportedError(caught, options, reward);
    if (err instanceof RewardError)
      emit(makeEvent({ type: 'reward_error', file: err.file, line: err.line, column: err.column, kind: err.kind, message: err.detail }));
    emit(makeEvent({ type: 'finished', ok: false, run_dir: runDir, summary: null, error: err instanceof Error ? err.message : String(err) }));
    throw err;
  } finally {
    await env?.close();
    await sandbox?.close();
    policies?.learner.net.dispose();
    policies?.learner.dispose();
    policies?.initNet?.dispose();
    clearInterval(keepAlive);
  }
}

/**
 * The run folder made ready: a resumed run's checkpoint checked against its records and its task and reward
 * checked against the command's; a new run's folder cleared of an earlier run (with --overwrite, or one that
 * never reached a checkpoint) and given the reward copy and config.json.
 */
function openRun(
  options: TrainOptions,
  runDir: string,
  emit: (e: RunnerEvent) => void,
): { state: TrainState; task: TaskSpec; previous: { dir: string; state: TrainState } | null; reward: RewardCopy } {
  const previous = options.resume ? readCheckpoint(runDir) : null;
  // A new run's options are checked before an earlier run in the folder is cleared.
  const fresh = options.resume ? null : newRun(options);
  if (options.resume && !previous) {
    throw new RunFilesError(
      `${runDir} has no checkpoint to resume from (its training stopped before writing one): start it again with the same command without --resume — there is nothing to lose`,
    );
  }
  if (!options.resume && existsSync(path.join(runDir, RUN_FILES.metrics))) {
    const checkpointed = hasCheckpoint(runDir);
    if (checkpointed && !options.overwrite)
      throw new Error(`${runDir} already holds a run; pass --resume to continue it, --overwrite to replace it, or choose another --out`);
    if (!checkpointed && !options.overwrite) {
      emit(
        makeEvent({
          type: 'log',
          level: 'info',
          message: `${runDir}: the earlier training stopped before its first checkpoint, so there is nothing to resume or lose; starting it again`,
        }),
      );
    }
    clearRun(runDir);
  }
  const rewardCopy = previous || !options.rewardFile ? runRewardCopy(runDir) : path.join(runDir, rewardCopyName(options.rewardFile));
  if (previous) {
    checkMetricsAgainstCheckpoint(path.join(runDir, RUN_FILES.metrics), previous.state);
    const state = previous.state;
    const task =
      options.task === undefined ? resolveTask(state.taskFile ?? state.task) : typeof options.task === 'string' ? resolveTask(options.task) : options.task;
    if (task.id !== state.task) throw new Error(`${runDir} was trained on ${state.task}, not ${task.id}`);
    if (options.rewardFile && sha256(options.rewardFile) !== state.rewardSha256) {
      throw new Error(`${options.rewardFile} changed since the run started; resume trains the copy in ${rewardCopy}, or start a new run`);
    }
    // The run folder may be someone else's: its copy is read once, checked, and that text is what trains.
    const copy = readRunRewardCopy(runDir);
    if (!copy) throw new RunFilesError(`${rewardCopy}: no such file (the run's copy of its reward, which resume trains)`);
    if (typeof state.rewardSha256 === 'string' && copy.sha256 !== state.rewardSha256) {
      throw new RunFilesError(
        `${copy.file}: edited since the run started (its sha256 is not the one ${path.join(previous.dir, 'state.json')} records), so resuming would train ` +
          `a reward its first ${state.frames.toLocaleString('en-US')} frames did not; start a new run with it instead: rewardsmith train ${copy.file} --task ${state.taskFile ?? state.task} --out NEW_DIR`,
      );
    }
    checkExpectedReward(copy.file, copy.sha256, options.rewardSha256);
    return { state, task, previous, reward: copy };
  }
  const { task, state, bytes } = fresh!;
  mkdirSync(runDir, { recursive: true });
  writeAtomic(runDir, rewardCopy, bytes);
  storeConfig(
    runDir,
    options.config ?? {
      task: typeof options.task === 'string' ? options.task : task.id,
      steps: state.totalFrames,
      seed: state.seed,
      envs: state.numEnvs,
      backend: options.backend ?? 'auto',
      init: state.init,
      evalEpisodes: options.evalEpisodes ?? DEFAULT_EVAL_EPISODES,
      workers: options.workers ?? null,
      rolloutSteps: state.rolloutSteps,
      checkpointEvery: options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY,
      hyperparameters: state.hyperparameters,
      configFile: null,
    },
    state.trainEpisodeSteps!,
  );
  return { state, task, previous: null, reward: rewardCopyOf(rewardCopy, bytes) };
}

/** The run's configuration as it trains: the training-episode limit in effect, not only the one given. */
function storeConfig(runDir: string, config: TrainConfig, trainEpisodeSteps: number): void {
  writeStoredConfig(runDir, { ...config, trainEpisodeSteps });
}

/** A new run's task and counters, its options checked, and its reward file's bytes, read once: what is copied is what is hashed. */
function newRun(options: TrainOptions): { task: TaskSpec; state: TrainState; bytes: Buffer } {
  const { rewardFile } = options;
  if (!rewardFile) throw new Error('a reward file is required');
  if (options.task === undefined) throw new Error('a task is required (--task)');
  const task = typeof options.task === 'string' ? resolveTask(options.task) : options.task;
  const bytes = options.rewardBytes ?? readFileSync(rewardFile);
  const rewardSha256 = sha256Hex(bytes);
  checkExpectedReward(rewardFile, rewardSha256, options.rewardSha256);
  return { task, state: newRunState(options, rewardFile, rewardSha256, task), bytes };
}

/** The reward text read is the one the caller checked (`rewardSha256`), or nothing trains. */
function checkExpectedReward(file: string, actual: string, expected: string | undefined): void {
  if (expected === undefined || actual === expected) return;
  throw new RunFilesError(
    `${file}: not the reward text this run was given to train (its sha256 ${actual.slice(0, 12)}… differs from --reward-sha256 ${expected.slice(0, 12)}…): ` +
      'it was changed or replaced after it was checked, so nothing was trained',
  );
}

/** The counters of a run that has not trained yet. */
function newRunState(options: TrainOptions, rewardFile: string, rewardSha256: string, task: TaskSpec): TrainState {
  const trainEpisodeSteps = options.trainEpisodeSteps ?? task.trainEpisodeSteps ?? task.maxSteps;
  if (trainEpisodeSteps > task.maxSteps) {
    throw new UsageError(
      `--train-episode-steps ${trainEpisodeSteps} is longer than ${task.id}'s episodes (${task.maxSteps} steps); give at most ${task.maxSteps}`,
    );
  }
  const seed = options.seed ?? 0;
  const numEnvs = options.envs ?? DEFAULT_ENVS;
  const envSeeds = Array.from({ length: numEnvs }, (_, i) => trainingStreamSeed(seed, i));
  return {
    version: 1,
    task: task.id,
    ...(task.file ? { taskFile: task.file } : {}),
    rewardFile: path.resolve(rewardFile),
    rewardSha256,
    seed,
    totalFrames: options.steps ?? DEFAULT_STEPS,
    numEnvs,
    rolloutSteps: options.rolloutSteps ?? DEFAULT_ROLLOUT_STEPS,
    trainEpisodeSteps,
    hyperparameters: { ...DEFAULT_HYPERPARAMETERS, ...options.hyperparameters },
    init: options.init ? path.resolve(options.init) : null,
    frames: 0,
    update: 0,
    metricsLines: 0,
    wallSeconds: 0,
    rng: seed ^ 0x5eed5,
    envSeeds,
    trainingSeeds: [...envSeeds],
    normaliser: { runningAbsReturn: 0, initialised: false },
    recent: [],
    episodes: 0,
    lastStats: { policyLoss: 0, valueLoss: 0, entropy: 0, kl: 0, fps: 0 },
  };
}

interface Policies {
  learner: Learner;
  /** The frozen initial policy of `--init` (the KL term's reference), or null. */
  initNet: PolicyNetwork | null;
  /** The worlds `--init`'s policy learned from (its demonstrations). */
  initWorldSeeds: number[];
}

/** The policy that trains (the checkpoint's on resume, else new or a copy of `--init`'s) and the initial policy. */
async function startPolicies(
  engine: ReturnType<typeof engineOf>,
  featureSize: number,
  state: TrainState,
  task: TaskSpec,
  checkpointDir: string | null,
  namedInit: string | undefined,
): Promise<Policies> {
  const config = { featureSize, numActions: GAME_FACTS.actions.length, hidden: [64, 64] };
  // The checkpoint is readCheckpoint's, a folder of the run folder (its parent): no file is read from outside that.
  const net = checkpointDir ? loadNetwork(checkpointDir, engine, path.dirname(checkpointDir)).net : newNetwork(engine, config, new Rng(state.seed ^ 0x1417));
  const learner = createLearner(engine, net, state.hyperparameters.learningRate);
  let initNet: PolicyNetwork | null = null;
  try {
    if (checkpointDir) await restoreOptimizer(checkpointDir, learner, path.dirname(checkpointDir));
    let initWorldSeeds: number[] = [];
    if (state.init) {
      const runDir = checkpointDir ? path.dirname(checkpointDir) : null;
      const loaded = loadNetwork(resolveCheckpointDir(state.init), engine, initRoot(state.init, runDir, namedInit));
      initNet = loaded.net;
      if (loaded.file.featureSize !== featureSize) {
        throw new Error(`--init ${state.init} was trained with ${loaded.file.featureSize} features (${loaded.file.task}); ${task.id} has ${featureSize}`);
      }
      const weightsSha256 = sha256Hex(float32Bytes(initNet.weights()));
      if (!runDir) state.initWeightsSha256 = weightsSha256;
      else if (typeof state.initWeightsSha256 === 'string' && state.initWeightsSha256 !== weightsSha256)
        throw new RunFilesError(
          `--init ${state.init}: its weights changed since the run started (their sha256 is not the one ${path.join(checkpointDir!, 'state.json')} records), ` +
            'and a resumed run keeps the policy its KL term is measured against; start a new run from it instead',
        );
      if (!checkpointDir) net.setWeights(initNet.weights());
      initWorldSeeds = loaded.file.worldSeeds ?? [];
    }
    if (net.config.featureSize !== featureSize) throw new Error(`the checkpoint has ${net.config.featureSize} features; the env has ${featureSize}`);
    return { learner, initNet, initWorldSeeds };
  } catch (err) {
    learner.net.dispose();
    learner.dispose();
    initNet?.dispose();
    throw err;
  }
}

/**
 * The folder a run's `--init` checkpoint (`init`, as state.json records it) is read within. A new run's was named
 * by the user. A resumed run's path comes from its records, which may be someone else's, so it is followed only
 * when it lies inside the run folder (`resumedRun`) or the user names it again (`named`, which must be it).
 */
function initRoot(init: string, resumedRun: string | null, named: string | undefined): string {
  if (!resumedRun) return init;
  if (named !== undefined) {
    if (path.resolve(named) !== path.resolve(init))
      throw new UsageError(
        `--init ${named} is not the checkpoint ${resumedRun} started from (${init}); a resumed run keeps its --init — start a new run to change it`,
      );
    return init;
  }
  if (isInsideFolder(resumedRun, init)) return resumedRun;
  throw new UsageError(
    `${resumedRun} started from --init ${init}, outside the run folder, and a run folder's records do not choose a checkpoint to load; name it again: rewardsmith train --resume ${resumedRun} --init ${init}`,
  );
}

/** The held-out evaluation after training, in a reward sandbox of its own (null when `evalEpisodes` is 0). */
async function heldOutEvaluation(
  options: TrainOptions,
  run: { task: TaskSpec; state: TrainState; net: PolicyNetwork; trainingSeeds: Set<number>; reward: RewardCopy; emit: (e: RunnerEvent) => void },
): Promise<Awaited<ReturnType<typeof evaluate>> | null> {
  const { task, state } = run;
  const episodes = options.evalEpisodes ?? DEFAULT_EVAL_EPISODES;
  if (episodes <= 0) return null;
  options.onEvalEpisode?.(0, episodes);
  const numEnvs = Math.max(1, Math.min(options.evalEnvs ?? options.config?.evalEnvs ?? Math.min(state.numEnvs, EVAL_ENVS), episodes));
  const sandbox = await RewardSandbox.open(run.reward.file, numEnvs, { attack: task.attack, episodeSteps: task.maxSteps, source: run.reward.text });
  try {
    // As `eval` evaluates a checkpoint: pipelined where the network's rows are independent (the same records).
    return await evaluatePolicy({ net: run.net, file: { numActions: GAME_FACTS.actions.length } }, null, {
      task,
      episodes,
      envs: numEnvs,
      seed: state.seed,
      excludeSeeds: run.trainingSeeds,
      workers: options.workers,
      emit: run.emit,
      sandbox,
      onEpisode: options.onEvalEpisode,
    });
  } finally {
    await sandbox.close();
  }
}

/** Counts a PPO update into the run's state and returns its metrics.ndjson line. */
function countUpdate(
  state: TrainState,
  rollout: Rollout,
  u: { stats: ReturnType<Learner['update']>; explained: number; successCurve: TrainingSuccess; unfinishedReturn: number; fps: number },
): UpdateMetrics {
  const { finished } = rollout;
  const { stats, fps } = u;
  state.update++;
  state.episodes += finished.length;
  state.recent = [...state.recent, ...finished].slice(-CURVE_WINDOW);
  const success = u.successCurve.estimate();
  state.lastStats = { policyLoss: stats.policyLoss, valueLoss: stats.valueLoss, entropy: stats.entropy, kl: stats.kl, fps };
  return {
    update: state.update,
    frames: state.frames,
    fps,
    mean_return: state.recent.length ? state.recent.reduce((s, e) => s + e.ret, 0) / state.recent.length : 0,
    success_rate: success.rate,
    success,
    episodes: state.episodes,
    // From the first update on: the episodes that ended in it, and the partial returns of those still running
    // (a long-episode task may finish none for many updates; the curves say which is which).
    finished_episodes: finished.length,
    finished_return: finished.length ? finished.reduce((s, e) => s + e.ret, 0) / finished.length : null,
    unfinished_return: u.unfinishedReturn,
    policy_loss: stats.policyLoss,
    value_loss: stats.valueLoss,
    entropy: stats.entropy,
    kl: stats.kl,
    approx_kl: stats.approxKl,
    clip_fraction: stats.clipFraction,
    explained_variance: Number.isFinite(u.explained) ? u.explained : null,
    learning_rate: state.hyperparameters.learningRate,
    wall_seconds: state.wallSeconds,
  };
}

/**
 * The file a reward error or a patch points at: the reward file this command named (`train FILE`, or `--resume
 * DIR --reward FILE`) while it still holds the text the run trains, which is the file the user edits; else the
 * run's own copy. Never the path the run's records name: the folder may be someone else's.
 */
function editedFile(options: TrainOptions, reward: RewardCopy): string {
  const named = options.rewardFile;
  return named && existsSync(named) && sha256(named) === reward.sha256 ? path.resolve(named) : reward.file;
}

/** The run trains its copy of the reward: a reward error in it points at the file the user edits (`editedFile`). */
function reportedError(err: unknown, options: TrainOptions, reward: RewardCopy): unknown {
  if (!(err instanceof RewardError) || path.resolve(err.file) !== reward.file) return err;
  const file = editedFile(options, reward);
  return file === reward.file ? err : new RewardError(err.kind, file, err.line, err.column, err.detail, err.env);
}
