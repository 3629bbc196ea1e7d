// A training run's folder and its checkpoint. The checkpoint holds the policy, the optimizer, the random
// streams, the env seeds and the metrics position: enough to resume after a SIGKILL with no metric line lost
// or repeated. A checkpoint is written beside the old one and renamed over it, so a kill at any moment leaves
// one complete checkpoint (the current one, or `.old` between the renames).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { writeAtomic } from '../files';
import { metricsCsv, readRecordBytes, readRecordJson, readSummary, RUN_FILES, type RunSummary, type UpdateMetrics } from '../records';
import { savePolicy } from '../ppo/policy';
import { saveOptimizer, type Learner } from '../ppo/learner';
import type { PpoHyperparameters } from '../ppo/ppo';
import { withTrainingEpisodes, type TaskSpec } from '../tasks';
import type { TrainingSuccessState } from './training-success';

/** `checkpoint/state.json`: everything besides the weights needed to continue exactly. */
export interface TrainState {
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
  /** Where training episodes end (absent in checkpoints written before the option: at the task's limit). */
  trainEpisodeSteps?: number;
  hyperparameters: PpoHyperparameters;
  init: string | null;
  /** sha256 of the --init policy's weights when the run started (absent: no --init, or an older checkpoint); a resume checks it. */
  initWeightsSha256?: string;
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

export function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** A run folder's records disagree with its checkpoint, or a checkpoint file is damaged; names the file. */
export class RunFilesError extends Error {
  override readonly name = 'RunFilesError';
}

/** Whether the run folder holds a checkpoint (complete or not) that `--overwrite` would lose. */
export function hasCheckpoint(runDir: string): boolean {
  return [RUN_FILES.checkpoint, CHECKPOINT_OLD].some((name) => existsSync(path.join(runDir, name, 'state.json')));
}

/** Removes everything a training writes into its run folder, before it starts again from nothing. */
export function clearRun(runDir: string): void {
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

/**
 * Reads the newest complete checkpoint of a run (a SIGKILL between the renames leaves the old one) and checks
 * it before anything trusts it: each file is read through the checked reader (nothing from outside the run
 * folder, even through a linked checkpoint folder; a bounded size), state.json parses and has its counters, the optimizer's bytes match its layout.
 */
export function readCheckpoint(runDir: string): { dir: string; state: TrainState } | null {
  for (const name of [RUN_FILES.checkpoint, CHECKPOINT_OLD]) {
    const dir = path.join(runDir, name);
    const file = path.join(dir, 'state.json');
    if (!existsSync(file)) continue;
    const damaged = (what: string) =>
      new RunFilesError(`${what}; the checkpoint is damaged — start the run again with --overwrite (or copy a good checkpoint over it)`);
    const readJson = (json: string): unknown => {
      const text = readRecordBytes(json, runDir).toString('utf8');
      try {
        return JSON.parse(text);
      } catch (err) {
        throw damaged(`${json}: truncated or not JSON (${(err as Error).message})`);
      }
    };
    const state = readJson(file) as TrainState;
    for (const key of ['frames', 'update', 'metricsLines', 'totalFrames', 'numEnvs', 'rolloutSteps', 'seed', 'rng'] as const) {
      if (typeof state?.[key] !== 'number') throw damaged(`${file}: "${key}" is missing or not a number`);
    }
    if (!Array.isArray(state.envSeeds) || state.envSeeds.length !== state.numEnvs) throw damaged(`${file}: "envSeeds" does not hold one seed per env`);
    const layoutFile = path.join(dir, 'optimizer.json');
    const bytesFile = path.join(dir, 'optimizer.bin');
    if (!existsSync(layoutFile)) throw damaged(`${layoutFile}: missing`);
    if (!existsSync(bytesFile)) throw damaged(`${bytesFile}: missing`);
    const layout = readJson(layoutFile) as { shape: number[] }[];
    if (!Array.isArray(layout) || !layout.every((w) => Array.isArray(w?.shape) && w.shape.every((n) => Number.isInteger(n) && n >= 0)))
      throw damaged(`${layoutFile}: not a list of optimizer variables, each with its shape`);
    const expected = 4 * layout.reduce((sum, w) => sum + w.shape.reduce((a, b) => a * b, 1), 0);
    const actual = readRecordBytes(bytesFile, runDir).length;
    if (actual !== expected) throw damaged(`${bytesFile}: ${actual} bytes, but optimizer.json describes ${expected}`);
    return { dir, state };
  }
  return null;
}

/**
 * The training state beside a checkpoint's policy, for evaluating it (null for a checkpoint without one, such
 * as `pretrain`'s); unlike `readCheckpoint`, no optimizer is needed. Read within `root`, the folder the user
 * named (the run folder, or the checkpoint folder itself).
 */
export function checkpointState(checkpointDir: string, root = checkpointDir): TrainState | null {
  const file = path.join(checkpointDir, 'state.json');
  return existsSync(file) ? (readRecordJson(file, root) as TrainState) : null;
}

/** metrics.ndjson must hold every update the checkpoint has counted, or the curve would silently lose them. */
export function checkMetricsAgainstCheckpoint(metricsFile: string, state: TrainState): void {
  const lines = existsSync(metricsFile) ? metricsLines(metricsFile) : [];
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

export async function writeCheckpoint(runDir: string, task: string, learner: Learner, state: TrainState): Promise<void> {
  const tmp = path.join(runDir, CHECKPOINT_TMP);
  rmSync(tmp, { recursive: true, force: true });
  savePolicy(learner.net, tmp, task);
  await saveOptimizer(tmp, learner);
  writeAtomic(runDir, path.join(tmp, 'state.json'), JSON.stringify(state) + '\n');
  const current = path.join(runDir, RUN_FILES.checkpoint),
    old = path.join(runDir, CHECKPOINT_OLD);
  rmSync(old, { recursive: true, force: true });
  if (existsSync(current)) renameSync(current, old);
  renameSync(tmp, current);
  rmSync(old, { recursive: true, force: true });
}

/** The non-empty lines of a run's metrics.ndjson, read through the checked reader. */
function metricsLines(file: string): string[] {
  return readRecordBytes(file)
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
}

/** Keeps the first `lines` lines of metrics.ndjson: updates after the checkpoint are redone on resume. */
export function truncateMetrics(file: string, lines: number): void {
  if (!existsSync(file)) {
    writeAtomic(path.dirname(file), file, '');
    return;
  }
  const kept = metricsLines(file).slice(0, lines);
  writeAtomic(path.dirname(file), file, kept.map((l) => l + '\n').join(''));
}

/** metrics.csv beside metrics.ndjson, rewritten from it (at each checkpoint and at the end). */
export function writeMetricsCsv(metricsFile: string, csvFile: string): void {
  const lines = metricsLines(metricsFile).map((l) => JSON.parse(l) as UpdateMetrics);
  writeAtomic(path.dirname(csvFile), csvFile, metricsCsv(lines));
}

/** summary.json's `train` part from the checkpoint's counters (zeros for a checkpoint without a state). */
export function trainingSummary(state: TrainState | null, success: RunSummary['train']['success']): RunSummary['train'] {
  const recent = state?.recent ?? [];
  return {
    updates: state?.update ?? 0,
    frames: state?.frames ?? 0,
    mean_return: recent.length ? recent.reduce((s, e) => s + e.ret, 0) / recent.length : 0,
    success_rate: success.rate,
    success,
    entropy: state?.lastStats.entropy ?? 0,
    fps: state?.lastStats.fps ?? 0,
    ...(state?.trainEpisodeSteps !== undefined ? { episode_steps: state.trainEpisodeSteps } : {}),
  };
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

/** The task as training runs it: episodes end at the run's training-episode limit (evaluation uses `task`). */
export function trainingEpisodes(task: TaskSpec, state: TrainState): TaskSpec {
  // Checkpoints from before the option trained to the task's limit and go on doing so.
  return withTrainingEpisodes(task, state.trainEpisodeSteps);
}
