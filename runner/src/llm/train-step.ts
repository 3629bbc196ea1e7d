// The loop's training step: trains (and evaluates) one candidate reward with the runner's `train()`, resuming
// a run that an interruption left behind, and turns a reward failure during training into a result the loop
// sends back to the designer instead of an exception. With an engine (`loop --engine local|slurm`) the run is a
// `rewardsmith train` job on that engine instead, so that the loop's candidates train in parallel.
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { makeEvent, type RunnerEvent } from '../events';
import { train } from '../runs/train';
import type { BackendChoice } from '../ppo/backend';
import { RUN_FILES } from '../records';
import { RewardError, type RewardErrorKind } from '../reward/compile';
import type { TaskSpec } from '../tasks';
import { trainJob, type Engine } from '../sweep/engine';

export type TrainOutcome = { ok: true } | { ok: false; error: ReturnType<RewardError['toJSON']> };

export interface TrainStepOptions {
  rewardFile: string;
  task: TaskSpec;
  steps: number;
  seed: number;
  /** Run folder. */
  out: string;
  envs?: number;
  evalEpisodes?: number;
  backend?: string;
  init?: string;
  /** Train as a job on this engine (the task then goes to the job as `taskArg`: an id or a task file path). */
  engine?: Engine;
  taskArg?: string;
  /** The loop's event sink; the run's own started/finished events stay inside the loop. */
  emit?: (e: RunnerEvent) => void;
}

export async function trainReward(o: TrainStepOptions): Promise<TrainOutcome> {
  if (o.engine) return trainAsJob(o, o.engine);
  // Interrupted after the run finished but before the loop recorded it: the run is complete.
  if (existsSync(path.join(o.out, RUN_FILES.summary))) return { ok: true };
  const resume = existsSync(path.join(o.out, RUN_FILES.checkpoint));
  // A run killed before its first checkpoint has nothing to continue from; start it again.
  if (!resume && existsSync(o.out)) rmSync(o.out, { recursive: true, force: true });
  const emit = o.emit;
  try {
    await train({
      rewardFile: o.rewardFile,
      task: o.task,
      steps: o.steps,
      seed: o.seed,
      out: o.out,
      envs: o.envs,
      evalEpisodes: o.evalEpisodes,
      backend: o.backend as BackendChoice | undefined,
      init: o.init,
      resume,
      emit: emit
        ? (e) => {
            if (e.type === 'started' || e.type === 'finished') return;
            // The loop answers a reward error by asking the designer for a fix; for the editor it is progress, not a failure.
            if (e.type === 'reward_error')
              emit(
                makeEvent({
                  type: 'log',
                  level: 'warn',
                  message: `reward error (${e.kind}) at ${e.file}:${e.line}:${e.column}: ${e.message}; asking the designer for a fix`,
                }),
              );
            else emit(e);
          }
        : undefined,
    });
    return { ok: true };
  } catch (err) {
    if (err instanceof RewardError && err.kind === 'host') throw hostDied(o.rewardFile, err.message);
    if (err instanceof RewardError) return { ok: false, error: err.toJSON() };
    throw err;
  }
}

/** The candidate as a `train` job on the engine, which resumes it as it resumes every job (a job a killed loop left running is waited for). */
async function trainAsJob(o: TrainStepOptions, engine: Engine): Promise<TrainOutcome> {
  const result = await engine.run(
    trainJob({
      name: path.basename(path.dirname(path.dirname(o.out))) + '/' + path.basename(path.dirname(o.out)),
      runDir: o.out,
      rewardFile: o.rewardFile,
      task: o.taskArg ?? o.task.id,
      seed: o.seed,
      steps: o.steps,
      init: o.init,
      envs: o.envs,
      evalEpisodes: o.evalEpisodes,
      backend: o.backend,
    }),
  );
  if (result.state === 'completed') return { ok: true };
  const e = result.rewardError;
  if (e?.kind === 'host') throw hostDied(o.rewardFile, `${e.file}:${e.line}:${e.column}: ${e.message}`);
  if (e) return { ok: false, error: { ...e, kind: e.kind as RewardErrorKind, env: null } };
  throw new Error(`training ${o.rewardFile} on ${engine.kind} ${result.state}: ${result.message ?? 'no reason given'} (log: ${path.join(o.out, 'job.log')})`);
}

/** A sandbox host that died is not the reward's fault: the loop stops (and resumes when run again) instead of asking the designer for a fix. */
function hostDied(rewardFile: string, what: string): Error {
  return new Error(`training ${rewardFile} stopped: ${what}; the reward is not at fault: run the same command again to resume from the run's last checkpoint`);
}
