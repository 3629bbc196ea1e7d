// The training configuration: every option that shapes a run, declared once with its type and bounds.
// The same declarations parse `rewardsmith train`'s flags and check a configuration file (YAML or JSON,
// `--config FILE`, the flags override it); the effective configuration is stored in the run folder
// (`config.json`) so that `--resume` continues with exactly the options the run started with.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readRecordBytes, writeAtomic } from '../files';
import {
  applyOptionsFile,
  checkValue,
  parseCommandArgs,
  UsageError,
  type CommandSpec,
  type IntOption,
  type NumberOption,
  type OptionSpec,
  type ParsedArgs,
} from '../args';
import { RUN_FILES, RunRecordError } from '../records';
import { DEFAULT_HYPERPARAMETERS, type PpoHyperparameters } from '../ppo/ppo';
import { BACKEND_CHOICES, type BackendChoice } from '../ppo/backend';
import { DEFAULT_EVAL_EPISODES } from './evaluate';

/** The paper's training budget. */
export const DEFAULT_STEPS = 256_000;
export const DEFAULT_ENVS = 32;
/** Steps per env per rollout; one PPO update per rollout of envs × this frames. */
export const DEFAULT_ROLLOUT_STEPS = 64;
export const DEFAULT_CHECKPOINT_EVERY = 4;
// Beyond a few hundred envs one policy batch no longer fits the workers' memory and a single update takes
// minutes on a laptop; 1e8 overflowed the stack while building the env array.
export const MAX_ENVS = 512;

type HyperparameterName = keyof PpoHyperparameters;
/** Flag name → hyperparameter, with the bounds in which PPO is meaningful. */
const HYPERPARAMETER_OPTIONS: Record<string, (IntOption | NumberOption) & { key: HyperparameterName }> = {
  'learning-rate': { key: 'learningRate', type: 'number', min: 1e-8, max: 1, description: 'Adam learning rate' },
  gamma: { key: 'gamma', type: 'number', min: 0, max: 1, description: 'discount factor' },
  lambda: { key: 'lambda', type: 'number', min: 0, max: 1, description: 'GAE λ' },
  clip: { key: 'clip', type: 'number', min: 0.001, max: 1, description: 'PPO clip range' },
  'entropy-coef': { key: 'entropyCoef', type: 'number', min: 0, max: 1, description: 'entropy bonus weight' },
  'value-coef': { key: 'valueCoef', type: 'number', min: 0, max: 100, description: 'value loss weight' },
  'kl-coef': { key: 'klCoef', type: 'number', min: 0, max: 100, description: 'weight of KL to the --init policy' },
  epochs: { key: 'epochs', type: 'int', min: 1, max: 100, description: 'PPO epochs per update' },
  minibatches: { key: 'minibatches', type: 'int', min: 1, max: 4096, description: 'minibatches per epoch' },
  'max-grad-norm': { key: 'maxGradNorm', type: 'number', min: 0.001, max: 1e6, description: 'gradient clipping norm' },
  'value-pretrain-updates': { key: 'valuePretrainUpdates', type: 'int', min: 0, max: 100_000, description: 'value-only updates at the start of an --init run' },
  'return-momentum': { key: 'returnMomentum', type: 'number', min: 0, max: 1, description: 'momentum of the reward normaliser' },
};

export const TRAIN_SPEC = {
  command: 'train',
  summary: `Trains a PPO agent on the reward in the headless simulator, then evaluates it on held-out worlds and writes
DIR/summary.json, DIR/metrics.ndjson (+ metrics.csv), DIR/eval/, DIR/config.json and a checkpoint that --resume continues.`,
  positionals: 'REWARD_FILE',
  minPositionals: 0,
  maxPositionals: 1,
  options: {
    task: { type: 'string', valueName: 'TASK', description: 'built-in task id or a task file (.json/.yaml)' },
    out: { type: 'string', valueName: 'DIR', description: 'run folder' },
    config: {
      type: 'string',
      valueName: 'FILE',
      description: 'training configuration (YAML/JSON: any option below but out/resume/overwrite/events); flags override it',
    },
    steps: { type: 'int', min: 1, max: 1e10, default: DEFAULT_STEPS, description: 'training frames (env steps summed over envs)' },
    seed: { type: 'int', min: 0, max: 2 ** 31 - 1, default: 0, description: 'run seed' },
    envs: { type: 'int', min: 1, max: MAX_ENVS, default: DEFAULT_ENVS, description: 'parallel environments, one policy batch' },
    backend: {
      type: 'string',
      choices: BACKEND_CHOICES,
      default: 'auto',
      description:
        'network engine: auto tries TensorFlow.js on gpu (tfjs-node-gpu), node (tfjs-node), then js (fused plain JS); wasm and cpu are TensorFlow.js without a native package',
    },
    init: { type: 'string', valueName: 'CHECKPOINT', description: 'start from this policy and keep a KL term to it' },
    'eval-episodes': {
      type: 'int',
      min: 0,
      max: 100_000,
      default: DEFAULT_EVAL_EPISODES,
      description: 'held-out evaluation episodes after training (0 skips)',
    },
    'eval-envs': {
      type: 'int',
      min: 1,
      max: MAX_ENVS,
      description: 'parallel environments of the held-out evaluation (default: --envs, at most 25; every episode at once suits long episodes)',
    },
    workers: { type: 'int', min: 0, max: 256, description: 'env worker threads (default: one per core)' },
    'rollout-steps': { type: 'int', min: 1, max: 100_000, default: DEFAULT_ROLLOUT_STEPS, description: 'steps per env per PPO update' },
    'train-episode-steps': {
      type: 'int',
      valueName: 'N',
      min: 1,
      max: 1_000_000,
      description:
        "training episodes end after N steps (bootstrapped from the value of the last state, the env goes on in a fresh world); held-out evaluation keeps the task's limit (default: the task's training setup, else its limit)",
    },
    'checkpoint-every': { type: 'int', min: 1, max: 1_000_000, default: DEFAULT_CHECKPOINT_EVERY, description: 'updates between checkpoints' },
    ...(HYPERPARAMETER_OPTIONS as Record<string, IntOption | NumberOption>),
    'return-norm': {
      type: 'string',
      choices: ['on', 'off'],
      description: "divide rewards by max(running mean of |episode return|, 1), the paper's normaliser (default on)",
    },
    resume: { type: 'string', valueName: 'DIR', description: 'continue the run in DIR from its last checkpoint, with its stored configuration' },
    overwrite: { type: 'boolean', description: 'replace a run already in DIR (default: refuse)' },
    'reward-sha256': {
      type: 'string',
      valueName: 'HEX',
      description: "train only if the reward (on --resume, the run's copy) has this sha256: the text a caller checked (loop, sweep)",
    },
    'no-check': {
      type: 'boolean',
      description: 'train without checking the reward first (lint and probes on the task’s probe bank refuse a reward with errors)',
    },
    events: { type: 'string', choices: ['ndjson'], description: 'print one JSON event per line on stdout instead of the progress bar' },
  },
  epilog: `examples:
  rewardsmith train r.reward.ts --task approach-tree --out runs/a
  rewardsmith train r.reward.ts --config train.yaml --out runs/b --seed 2
  rewardsmith train --resume runs/a`,
} satisfies CommandSpec<Record<string, OptionSpec>>;

/** Options a configuration file may set (what shapes a run; not where it goes or how it reports). */
const CONFIG_KEYS = [
  'task',
  'steps',
  'seed',
  'envs',
  'backend',
  'init',
  'eval-episodes',
  'eval-envs',
  'workers',
  'rollout-steps',
  'train-episode-steps',
  'checkpoint-every',
  'return-norm',
  ...Object.keys(HYPERPARAMETER_OPTIONS),
] as const;

/** The effective configuration of a run, as stored in `DIR/config.json`. */
export interface TrainConfig {
  task: string;
  steps: number;
  seed: number;
  envs: number;
  backend: BackendChoice;
  init: string | null;
  evalEpisodes: number;
  /** Environments of the held-out evaluation; null or absent (runs from before the option): the default. */
  evalEnvs?: number | null;
  workers: number | null;
  rolloutSteps: number;
  /** Where training episodes end; null or absent (runs from before the option): the task's default, else its limit. */
  trainEpisodeSteps?: number | null;
  checkpointEvery: number;
  hyperparameters: PpoHyperparameters;
  /** The configuration file it was read from, if any. */
  configFile: string | null;
}

export interface TrainInvocation {
  rewardFile: string | undefined;
  out: string;
  resume: boolean;
  overwrite: boolean;
  events: boolean;
  /** Check the reward (lint and probes) before training; `--no-check` turns it off. */
  check: boolean;
  /** `--reward-sha256`: the only reward text this invocation trains. */
  rewardSha256: string | undefined;
  config: TrainConfig;
  /** Options the user set for this invocation (flags or file), which a resume must not silently drop. */
  explicit: ReadonlySet<string>;
}

type TrainValues = ParsedArgs<typeof TRAIN_SPEC.options>['values'];

function configFrom(values: TrainValues, configFile: string | null): Omit<TrainConfig, 'task'> & { task: string | undefined } {
  const v = values as Record<string, unknown>;
  const hyperparameters = { ...DEFAULT_HYPERPARAMETERS };
  for (const [flag, o] of Object.entries(HYPERPARAMETER_OPTIONS))
    if (v[flag] !== undefined) (hyperparameters as Record<string, number | boolean>)[o.key] = v[flag] as number;
  if (values['return-norm'] !== undefined) hyperparameters.normaliseReturns = values['return-norm'] === 'on';
  return {
    task: values.task,
    steps: values.steps,
    seed: values.seed,
    envs: values.envs,
    backend: values.backend as BackendChoice,
    init: values.init ? path.resolve(values.init) : null,
    evalEpisodes: values['eval-episodes'],
    evalEnvs: values['eval-envs'] ?? null,
    workers: values.workers ?? null,
    rolloutSteps: values['rollout-steps'],
    trainEpisodeSteps: values['train-episode-steps'] ?? null,
    checkpointEvery: values['checkpoint-every'],
    hyperparameters,
    configFile,
  };
}

/** Frames in one PPO update: the smallest training budget that trains at all. */
export const framesPerUpdate = (c: Pick<TrainConfig, 'envs' | 'rolloutSteps'>) => c.envs * c.rolloutSteps;

/**
 * Parses `rewardsmith train`'s arguments (and `--config FILE`) into the run's configuration; on `--resume`
 * the stored configuration is the base and only options given now replace it.
 */
export function parseTrainArgs(argv: readonly string[]): TrainInvocation {
  const parsed = parseCommandArgs(TRAIN_SPEC, argv);
  const { values, positionals } = parsed;
  const explicit = new Set<string>(parsed.given);
  let configFile: string | null = null;
  if (values.config) {
    configFile = path.resolve(values.config);
    const stored = storedConfigOptions(values.config);
    const fromFile = stored ? applyStoredOptions(parsed, values.config, stored) : applyOptionsFile(TRAIN_SPEC, parsed, values.config, CONFIG_KEYS);
    for (const key of Object.keys(fromFile)) explicit.add(key);
  }
  const out = values.resume ?? values.out;
  if (!out) throw new UsageError('--out DIR is required');
  if (values.resume && values.out && path.resolve(values.out) !== path.resolve(values.resume)) {
    throw new UsageError('--resume DIR continues the run in DIR; drop --out or make it the same folder');
  }
  const rewardSha256 = values['reward-sha256']?.toLowerCase();
  if (rewardSha256 !== undefined && !/^[0-9a-f]{64}$/.test(rewardSha256))
    throw new UsageError(`--reward-sha256 ${values['reward-sha256']}: not a sha256 (64 hexadecimal digits)`);
  const base = configFrom(values, configFile);
  let config: TrainConfig;
  if (values.resume) {
    const stored = readStoredConfig(out);
    config = stored ? mergeResumed(stored, base, explicit) : { ...base, task: base.task ?? '' };
  } else {
    if (!positionals[0]) throw new UsageError('missing REWARD_FILE');
    if (!base.task) throw new UsageError('--task is required (a built-in task id or a task file), on the command line or in --config');
    config = { ...base, task: base.task };
    const batch = framesPerUpdate(config);
    if (config.steps < batch) {
      throw new UsageError(
        `--steps ${config.steps} is less than one PPO update (${config.envs} envs × ${config.rolloutSteps} rollout steps = ${batch} frames); ` +
          `give at least ${batch}, or fewer --envs / --rollout-steps`,
      );
    }
  }
  return {
    rewardFile: positionals[0],
    out,
    resume: values.resume !== undefined,
    overwrite: values.overwrite,
    events: values.events === 'ndjson',
    check: !values['no-check'],
    rewardSha256,
    config,
    explicit,
  };
}

/**
 * A run's own `config.json` given as `--config`: its stored configuration (camelCase, nulls for unset options)
 * as the options that produce it, so that `train R --config runs/a/config.json --out runs/b` trains runs/a
 * again. Null when the file is not such a configuration (then it is read as an options file).
 */
function storedConfigOptions(file: string): Record<string, unknown> | null {
  let parsed: unknown;
  try {
    parsed = /\.json$/i.test(file) ? JSON.parse(readFileSync(file, 'utf8')) : null;
  } catch {
    return null; // the options-file reader reports it with its location
  }
  const c = parsed as Partial<TrainConfig> | null;
  if (!c || typeof c !== 'object' || Array.isArray(c) || !c.hyperparameters || typeof c.hyperparameters !== 'object') return null;
  const h = c.hyperparameters as Partial<PpoHyperparameters>;
  const options: Record<string, unknown> = {
    task: c.task,
    steps: c.steps,
    seed: c.seed,
    envs: c.envs,
    backend: c.backend,
    init: c.init,
    'eval-episodes': c.evalEpisodes,
    'eval-envs': c.evalEnvs,
    workers: c.workers,
    'rollout-steps': c.rolloutSteps,
    'train-episode-steps': c.trainEpisodeSteps,
    'checkpoint-every': c.checkpointEvery,
    'return-norm': h.normaliseReturns === undefined ? undefined : h.normaliseReturns ? 'on' : 'off',
    ...Object.fromEntries(Object.entries(HYPERPARAMETER_OPTIONS).map(([flag, o]) => [flag, h[o.key]])),
  };
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined && v !== null));
}

/** Fills the options the user did not give from a stored configuration, each checked with its flag's spec. */
function applyStoredOptions(parsed: ParsedArgs<typeof TRAIN_SPEC.options>, file: string, stored: Record<string, unknown>): Record<string, unknown> {
  const options = TRAIN_SPEC.options as Record<string, OptionSpec>;
  for (const [key, value] of Object.entries(stored)) {
    const why = checkValue(options[key]!, value);
    if (why) throw new UsageError(`${file}: ${key} ${why}`);
    if (!parsed.given.has(key as keyof typeof TRAIN_SPEC.options & string)) (parsed.values as Record<string, unknown>)[key] = value;
  }
  return stored;
}

/** A resumed run keeps what it started with; an option given again must agree, except where it cannot change the result. */
function mergeResumed(stored: TrainConfig, now: ReturnType<typeof configFrom>, explicit: ReadonlySet<string>): TrainConfig {
  // Where and how fast it runs may change between segments; the rest shaped the run and may not. (The task
  // is checked against the checkpoint by the trainer, which resolves a task file to its id.)
  const free = new Set(['backend', 'workers', 'eval-episodes', 'eval-envs']);
  const merged: TrainConfig = { ...stored, hyperparameters: { ...stored.hyperparameters } };
  const asStored: Record<string, unknown> = {
    steps: stored.steps,
    seed: stored.seed,
    envs: stored.envs,
    init: stored.init,
    'rollout-steps': stored.rolloutSteps,
    'train-episode-steps': stored.trainEpisodeSteps ?? "the task's limit",
    'checkpoint-every': stored.checkpointEvery,
    'return-norm': stored.hyperparameters.normaliseReturns === false ? 'off' : 'on',
    ...Object.fromEntries(Object.entries(HYPERPARAMETER_OPTIONS).map(([flag, o]) => [flag, stored.hyperparameters[o.key]])),
  };
  const asNow: Record<string, unknown> = {
    steps: now.steps,
    seed: now.seed,
    envs: now.envs,
    init: now.init,
    'rollout-steps': now.rolloutSteps,
    'train-episode-steps': now.trainEpisodeSteps,
    'checkpoint-every': now.checkpointEvery,
    'return-norm': now.hyperparameters.normaliseReturns ? 'on' : 'off',
    ...Object.fromEntries(Object.entries(HYPERPARAMETER_OPTIONS).map(([flag, o]) => [flag, now.hyperparameters[o.key]])),
  };
  for (const key of explicit) {
    if (free.has(key) || !(key in asStored)) continue;
    if (asNow[key] !== asStored[key]) {
      throw new UsageError(
        `--${key} ${String(asNow[key])} differs from the run's ${String(asStored[key])} (stored in its ${RUN_FILES.config}); a resumed run keeps its configuration — start a new run to change it`,
      );
    }
  }
  if (explicit.has('backend')) merged.backend = now.backend;
  if (explicit.has('workers')) merged.workers = now.workers;
  if (explicit.has('eval-episodes')) merged.evalEpisodes = now.evalEpisodes;
  if (explicit.has('eval-envs')) merged.evalEnvs = now.evalEnvs;
  return merged;
}

/**
 * Reads `DIR/config.json`, or null for runs that predate it. A damaged file is the run folder's problem, not the
 * command line's: a RunRecordError (exit 1) naming the file and what is wrong, before anything is written.
 */
export function readStoredConfig(runDir: string): TrainConfig | null {
  const file = path.join(runDir, RUN_FILES.config);
  if (!existsSync(file)) return null;
  const damaged = (what: string) => new RunRecordError(`${file}: ${what}; the run's files are untouched`);
  // Read within the run folder, bounded: the folder may be someone else's.
  const text = readRecordBytes(file, runDir).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw damaged(`not valid JSON (${(err as Error).message})`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw damaged('not a run configuration (not a JSON object)');
  const c = parsed as Partial<TrainConfig>;
  const wrong: string[] = [];
  if (typeof c.evalEpisodes !== 'number') wrong.push('evalEpisodes (a number)');
  if (!c.hyperparameters || typeof c.hyperparameters !== 'object') wrong.push('hyperparameters (an object)');
  if (wrong.length > 0) throw damaged(`not a run configuration: lacks or mistypes ${wrong.join(', ')}`);
  return c as TrainConfig;
}

export function writeStoredConfig(runDir: string, config: TrainConfig): void {
  writeAtomic(runDir, path.join(runDir, RUN_FILES.config), JSON.stringify(config, null, 2) + '\n');
}
