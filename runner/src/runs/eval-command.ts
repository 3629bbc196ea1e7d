// `rewardsmith eval`: a checkpoint (a run folder or its checkpoint/ folder) evaluated on held-out worlds into a
// folder of its own, with summary.json and eval/ as a training run has them.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { noteRunFolder, parseCommandArgs, requireExisting, runCommand, UsageError } from '../args';
import { makeEvent } from '../events';
import { writeAtomic } from '../files';
import { readRunRewardCopy, rewardCopyName, rewardCopyOf, RUN_FILES, type RewardCopy, type RunSummary } from '../records';
import { RewardError, RewardSandbox } from '../reward/index';
import { resolveTask } from '../tasks';
import { BACKEND_CHOICES, ensureBackend, type BackendChoice } from '../ppo/backend';
import { engineOf, loadNetwork } from '../ppo/learner';
import { resolveCheckpointDir, type PolicyNetwork } from '../ppo/policy';
import { MAX_ENVS } from './config';
import { DEFAULT_EVAL_EPISODES, EVAL_ENVS, evalEvent, evaluatePolicy, writeEvalRecords } from './evaluate';
import { asCommandError, Reporter, resultTable } from './reporter';
import { checkpointState, hasCheckpoint, trainingEpisodes, trainingSummary } from './run-folder';
import { generalisationGap, TrainingSuccess } from './training-success';

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
    // The checkpoint's files stay inside the folder named, even through a linked checkpoint/ folder.
    const loaded = loadNetwork(dir, engineOf(backend), checkpoint);
    net = loaded.net;
    const state = checkpointState(dir, checkpoint);
    const task = resolveTask(v.task ?? state?.taskFile ?? loaded.file.task);
    if (v.reward !== undefined && !existsSync(v.reward)) throw new UsageError(`--reward ${v.reward}: no such file`);
    // The reward named, else the run's copy beside the checkpoint folder (read checked): each read once, and that
    // text is compiled, hashed and copied. The path state.json records is never compiled on its word: the folder
    // may be someone else's.
    const reward = v.reward !== undefined ? readRewardFile(v.reward) : readRunRewardCopy(path.join(dir, '..'));
    const rewardFile = reward?.file;
    // A checkpoint from `pretrain` has no reward: its evaluation counts successes and records no rewards.
    const hasReward = rewardFile !== undefined;
    if (!hasReward && state)
      throw new UsageError(
        `${path.join(dir, '..')} has no reward copy (${RUN_FILES.rewardCopy} or ${RUN_FILES.pythonRewardCopy}) beside its checkpoint; pass --reward FILE, the reward to record per-step rewards with`,
      );
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
    sandbox = hasReward ? await RewardSandbox.open(rewardFile, numEnvs, { attack: task.attack, episodeSteps: task.maxSteps, source: reward!.text }) : null;
    // Its own copy, as a training run has one, so that `analyze DIR` finds the reward (not in a training run's own folder, whose copy trains).
    if (reward && !hasCheckpoint(runDir)) writeAtomic(runDir, path.join(runDir, rewardCopyName(reward.file)), reward.text);
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
    const trainedSteps = state ? trainingEpisodes(task, state).maxSteps : task.maxSteps;
    const gap = generalisationGap(trainSuccess, result.summary.success, { train: trainedSteps, heldOut: task.maxSteps });
    const summary: RunSummary = {
      task: task.id,
      task_file: task.file ?? null,
      reward_file: hasReward ? path.resolve(rewardFile) : null,
      reward_sha256: reward?.sha256 ?? null,
      seed,
      env: 'sim',
      env_steps: state?.frames ?? 0,
      wall_seconds: (Date.now() - start) / 1000,
      backend: backend.name,
      train: trainingSummary(state, trainSuccess),
      eval: result.summary,
      generalisation_gap: gap,
    };
    const summaryFile = path.join(runDir, RUN_FILES.summary);
    writeAtomic(runDir, summaryFile, JSON.stringify(summary, null, 2) + '\n');
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

/** A reward file the user named, read once: its text is what is compiled, hashed and copied. */
function readRewardFile(file: string): RewardCopy {
  return rewardCopyOf(file, readFileSync(file));
}
