// The engine options `sweep`, `table` and `loop` share (`--engine local|slurm` and what each engine takes), the
// engine they describe, and Ctrl-C: the jobs are cancelled (scancel on Slurm) and the same command resumes them.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { CommandError, UsageError } from '../args';
import { type Engine, LocalEngine, SlurmEngine, SlurmError, defaultRunnerCommand } from './engine';

/** `--engine` without a default (loop: absent trains its jobs on this machine, one at a time). */
export const ENGINE_CHOICE = { type: 'string', description: 'where runs execute', choices: ['local', 'slurm'] } as const;

/** What the local pool and a Slurm cluster take. */
export const ENGINE_SETTINGS = {
  parallel: { type: 'int', description: 'local: runs at once (default: one per core)', valueName: 'N', min: 1 },
  partition: { type: 'string', description: 'slurm: partition (sbatch --partition)', valueName: 'P' },
  time: { type: 'string', description: 'slurm: time limit per run (sbatch --time, e.g. 30:00)', valueName: 'LIMIT' },
  'cpus-per-task': { type: 'int', description: 'slurm: CPUs per run', valueName: 'C', min: 1 },
  gpus: { type: 'int', description: 'slurm: GPUs per run (--gres=gpu:N)', valueName: 'N', min: 1 },
  'sbatch-arg': {
    type: 'list',
    description: 'slurm: more sbatch arguments, e.g. --sbatch-arg=--account=rl (use the = form for values that start with --)',
    valueName: 'ARG...',
  },
  node: {
    type: 'string',
    description: 'Node.js 20 executable the jobs run (default: this one; on a cluster: the path on the compute nodes)',
    valueName: 'PATH',
  },
  cli: { type: 'string', description: "rewardsmith CLI script the jobs run (default: this installation's)", valueName: 'PATH' },
  poll: { type: 'number', description: 'seconds between status polls (default 0.5 local, 2 slurm)', valueName: 'S', min: 0.05 },
} as const;

/** `--engine` (default local) and its settings, as sweep and table take them. */
export const ENGINE_OPTIONS = { engine: { ...ENGINE_CHOICE, default: 'local' }, ...ENGINE_SETTINGS } as const;

export interface EngineValues {
  engine?: string;
  parallel?: number;
  partition?: string;
  time?: string;
  'cpus-per-task'?: number;
  gpus?: number;
  'sbatch-arg': string[];
  node?: string;
  cli?: string;
  poll?: number;
}

/** The engine the options describe (null without `--engine`), after checking that each option fits it and that Slurm answers. */
export async function engineFromOptions(v: EngineValues): Promise<Engine | null> {
  const local = v.engine !== 'slurm';
  for (const name of ['partition', 'time', 'cpus-per-task', 'gpus', 'sbatch-arg'] as const) {
    if (local && (name === 'sbatch-arg' ? v[name].length > 0 : v[name] !== undefined)) throw new UsageError(`--${name} is a Slurm option; add --engine slurm`);
  }
  if (!local && v.parallel !== undefined) throw new UsageError('--parallel is for --engine local (Slurm schedules the jobs itself)');
  if (v.engine === undefined) {
    for (const name of ['parallel', 'node', 'cli', 'poll'] as const)
      if (v[name] !== undefined) throw new UsageError(`--${name} sets up the jobs of --engine local or slurm; add --engine`);
    return null;
  }
  // On a cluster these are paths on the compute nodes, which this machine may not have; locally they must exist.
  if (local) for (const name of ['node', 'cli'] as const) if (v[name] && !existsSync(v[name])) throw new UsageError(`--${name}: ${v[name]}: no such file`);
  const defaults = defaultRunnerCommand();
  const runner = { node: v.node ? path.resolve(v.node) : defaults.node, cli: v.cli ? path.resolve(v.cli) : defaults.cli };
  const pollMs = v.poll === undefined ? undefined : v.poll * 1000;
  if (local) return new LocalEngine({ parallel: v.parallel, pollMs, runner });
  await SlurmEngine.check().catch((err: Error) => {
    throw new CommandError(err.message);
  });
  return new SlurmEngine({ partition: v.partition, time: v.time, cpusPerTask: v['cpus-per-task'], gpus: v.gpus, extra: v['sbatch-arg'], pollMs, runner });
}

/**
 * Runs `body` with a signal that Ctrl-C (or SIGTERM) aborts: the engine then cancels the jobs, and running the
 * same command again resumes. A Slurm failure on the way is reported as the command's error.
 */
export async function cancellableOnSignal<T>(
  command: string,
  engine: Engine,
  say: (line: string) => void,
  body: (signal: AbortSignal) => Promise<T>,
): Promise<{ value: T; interrupted: boolean }> {
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) return;
    say(
      engine.kind === 'local'
        ? `${command}: stopping the runs (run the same command again to resume)`
        : `${command}: cancelling the Slurm jobs (scancel; run the same command again to resume)`,
    );
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return { value: await body(controller.signal), interrupted: controller.signal.aborted };
  } catch (err) {
    if (err instanceof SlurmError) throw new CommandError(err.message);
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
