// The loop's training step: trains (and evaluates) one candidate reward as a `rewardsmith train` job on the job
// runner that sweep and table use (runner/src/sweep/engine.ts), which also resumes it: a run an interrupted loop
// left running is waited for, a finished one is kept, anything else starts again from its checkpoint. Without
// `--engine` the job runs on this machine, one at a time; with `loop --engine local|slurm` the candidates train in
// parallel. A reward failure during training becomes a result the loop sends back to the designer instead of an
// exception.
import path from 'node:path';
import { makeEvent, type RunnerEvent } from '../events';
import type { RewardError, RewardErrorKind } from '../reward/compile';
import type { TaskSpec } from '../tasks';
import { LocalEngine, trainJob, type Engine } from '../sweep/engine';

export type TrainOutcome = { ok: true } | { ok: false; error: ReturnType<RewardError['toJSON']> };

export interface TrainStepOptions {
  rewardFile: string;
  /** The sha256 of the text the loop screened: the job trains that text, or fails naming the file (never another). */
  rewardSha256?: string;
  task: TaskSpec;
  steps: number;
  seed: number;
  /** Run folder. */
  out: string;
  envs?: number;
  evalEpisodes?: number;
  backend?: string;
  init?: string;
  /** The engine the job runs on (default: this machine, one job at a time). */
  engine?: Engine;
  /** The task as the job's `train --task` takes it: an id or a task file path (default: the task's id). */
  taskArg?: string;
  /** Aborting cancels the job (Ctrl-C on the loop); the same loop command resumes it. */
  signal?: AbortSignal;
  /** The loop's event sink; the run's own started/finished events stay inside the loop. */
  emit?: (e: RunnerEvent) => void;
}

let localEngine: Engine | undefined;

/** Where the loop trains without `--engine`: this machine, one job at a time. */
export function localTrainEngine(): Engine {
  return (localEngine ??= new LocalEngine({ parallel: 1 }));
}

export async function trainReward(o: TrainStepOptions): Promise<TrainOutcome> {
  const engine = o.engine ?? localTrainEngine();
  const emit = o.emit;
  const result = await engine.run(
    trainJob({
      name: path.basename(path.dirname(path.dirname(o.out))) + '/' + path.basename(path.dirname(o.out)),
      runDir: o.out,
      rewardFile: o.rewardFile,
      rewardSha256: o.rewardSha256,
      task: o.taskArg ?? o.task.id,
      seed: o.seed,
      steps: o.steps,
      init: o.init,
      envs: o.envs,
      evalEpisodes: o.evalEpisodes,
      backend: o.backend,
    }),
    { signal: o.signal, ...(emit ? { onEvent: (e: RunnerEvent) => forwardEvent(e, emit) } : {}) },
  );
  if (result.state === 'completed') return { ok: true };
  if (result.state === 'cancelled') throw new Error(`training ${o.rewardFile} was stopped; run the same command again to resume it`);
  const e = result.rewardError;
  if (e?.kind === 'host') throw hostDied(o.rewardFile, `${e.file}:${e.line}:${e.column}: ${e.message}`);
  if (e) return { ok: false, error: { ...e, kind: e.kind as RewardErrorKind, env: null } };
  throw new Error(`training ${o.rewardFile} on ${engine.kind} ${result.state}: ${result.message ?? 'no reason given'} (log: ${path.join(o.out, 'job.log')})`);
}

/** The run's events as the loop's: its own started/finished stay inside the loop, a reward error is progress (the designer fixes it). */
function forwardEvent(e: RunnerEvent, emit: (e: RunnerEvent) => void): void {
  if (e.type === 'started' || e.type === 'finished') return;
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

/** A sandbox host that died is not the reward's fault: the loop stops (and resumes when run again) instead of asking the designer for a fix. */
function hostDied(rewardFile: string, what: string): Error {
  return new Error(`training ${rewardFile} stopped: ${what}; the reward is not at fault: run the same command again to resume from the run's last checkpoint`);
}
