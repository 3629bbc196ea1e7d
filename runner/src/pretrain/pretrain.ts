// `rewardsmith pretrain`: the product's foundation policy. A scripted teacher (demonstrator.ts: full world
// access, or what the agent sees where the task's `teacher` is 'sight') plays a limited number of demonstration
// episodes in the simulator; a policy with exactly the RL agent's observation (the env's feature vector) and
// action set is behaviour-cloned from them; the folder it writes is a checkpoint that `train --init` fine-tunes
// and `eval` evaluates, with its own held-out evaluation.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { writeAtomic } from '../files';
import * as tf from '@tensorflow/tfjs-core';
import { GAME_FACTS } from '../schema';
import { resolveTask, withTrainingEpisodes, type TaskSpec } from '../tasks';
import { SimBatch } from '../env/privileged';
import { hash32, nextEpisodeSeed } from '../seeds';
import { RUN_FILES, rateRecord, type RunSummary } from '../records';
import { wilson, formatRate, type RateEstimate } from '../stats';
import { CommandError, parseCommandArgs, runCommand, UsageError, type CommandSpec, type OptionSpec } from '../args';
import { BACKEND_CHOICES, ensureBackend, type BackendChoice } from '../ppo/backend';
import { type ActorCritic, Rng, sampleActions, savePolicy, type PolicyNetwork } from '../ppo/policy';
import { crossEntropyAndGradient, FusedActorCritic, FusedAdam, lossWorkspace } from '../ppo/fused';
import { engineOf, newNetwork } from '../ppo/learner';
import { DEFAULT_EVAL_EPISODES, evaluatePolicy, summarise, writeEvalRecords } from '../runs/evaluate';
import { StageProgress } from '../runs/progress';
import { Demonstrator } from './demonstrator';

/**
 * Demonstration episodes by default: deliberately few, so that the foundation is a start that fine-tuning
 * improves on (the paper's foundation also starts well below its fine-tuned figures), not the answer.
 * Measured on approach-tree, 100 held-out episodes each: 4 demonstrations give a 7–16 % foundation (seeds 7–9);
 * 12 gave 42 % on seed 7, which the sparse reward alone lifted to 82 % (dense 88 %): most of the answer.
 */
export const DEFAULT_DEMOS = 4;
export const DEFAULT_EPOCHS = 30;
/** Probability that the teacher's chosen action is replaced by a random one while recording (the label stays
 * the teacher's): the demonstrations then show how to recover from mistakes the student will make. */
export const DEFAULT_NOISE = 0.15;
/**
 * DAgger rounds by default (the task's `daggerRounds` overrides it): none, so the plains tasks' foundations
 * are the demonstrations' clone alone.
 */
export const DEFAULT_DAGGER_ROUNDS = 0;
export const PRETRAIN_FILE = 'pretrain.json';
const HIDDEN = [64, 64];
const BATCH = 256;
const LEARNING_RATE = 1e-3;
const DEMO_SALT = 0xde70;
const MAX_RECORDING_ENVS = 8;

/** First world seed of demonstration env `i` for seed `seed` (a stream of its own, apart from PPO's); DAgger
 * round `round` (0: the teacher's own demonstrations) plays worlds of a stream of its own. */
export const demoStreamSeed = (seed: number, i: number, round = 0) => hash32(seed, i, DEMO_SALT + round);

export interface Demonstrations {
  featureSize: number;
  /** samples × featureSize, row-major. */
  features: Float32Array;
  /** The teacher's action for each sample. */
  actions: Int32Array;
  /** One entry per counted demonstration episode. */
  episodes: { seed: number; success: boolean; steps: number }[];
  /** Every world seed the recording touched (held-out evaluation skips them). */
  seeds: number[];
}

/** Who drives while the teacher labels: given a step's states, the action to execute in env `i` once the teacher
 * has labelled it `label` (called env by env, right after the teacher's act). */
type Driver = (features: Float32Array) => (i: number, label: number) => number;

/**
 * Plays `count` episodes on `round`'s world stream and records every state with the teacher's action for it;
 * `drive` chooses what is executed. Episodes end at the task's limit (a DAgger round passes the training
 * episode length), or, where the teacher drives, when it is spent (Demonstrator.spent: the sighted one without a
 * pickaxe labels nothing more), counted then as failed at the steps it had. `studentDrives`: a DAgger round (the
 * teacher's tunnel follows the student's heading, and the student plays on whatever the teacher could still label).
 */
function recordLabelled(
  task: TaskSpec,
  count: number,
  seed: number,
  round: number,
  drive: Driver,
  random: Rng,
  onEpisode?: (done: number, total: number, successes: number) => void,
  keep: (teacher: Demonstrator, label: number) => boolean = () => true,
  studentDrives = false,
): Demonstrations {
  const n = Math.max(1, Math.min(count, MAX_RECORDING_ENVS));
  const batch = new SimBatch(task, n, 0);
  const f = batch.featureSize;
  const teachers = batch.envs.map(() => new Demonstrator(task, () => random.next()));
  for (const t of teachers) t.followsStudent = studentDrives;
  const seeds = Array.from({ length: n }, (_, i) => demoStreamSeed(seed, i, round));
  const touched = new Set(seeds);
  const chunks: Float32Array[] = [];
  const labels: number[] = [];
  const episodes: Demonstrations['episodes'] = [];
  let started = n;
  const counted = Array.from({ length: n }, () => true);
  /** Steps played in each env's current episode. */
  const played = new Int32Array(n);
  let { features } = batch.reset(seeds);
  teachers.forEach((t, i) => t.reset(batch.envs[i]!));
  onEpisode?.(0, count, 0);
  while (episodes.length < count) {
    const actions = new Int32Array(n);
    const choose = drive(features);
    for (let i = 0; i < n; i++) {
      const label = teachers[i]!.act(batch.envs[i]!);
      // A spent teacher (the sighted one without a pickaxe) stands still: nothing more to show. Its demonstration
      // ends here rather than at the step limit (tens of thousands of unrecorded steps, every env's); the env plays
      // on uncounted, so what the others record stays the same.
      if (!studentDrives && counted[i] && teachers[i]!.spent) {
        counted[i] = false;
        episodes.push({ seed: seeds[i]!, success: false, steps: played[i]! });
        onEpisode?.(episodes.length, count, episodes.filter((e) => e.success).length);
      }
      if (counted[i] && !teachers[i]!.spent && keep(teachers[i]!, label)) {
        chunks.push(features.slice(i * f, (i + 1) * f));
        labels.push(label);
      }
      actions[i] = choose(i, label);
    }
    const res = batch.step(actions);
    features = res.features;
    for (let i = 0; i < n; i++) {
      const info = res.info[i]!;
      played[i] = info.done ? 0 : info.step;
      if (!info.done) continue;
      if (counted[i]) {
        episodes.push({ seed: seeds[i]!, success: info.success, steps: info.step });
        onEpisode?.(episodes.length, count, episodes.filter((e) => e.success).length);
      }
      // SimBatch has reset env i onto the next seed of its stream.
      seeds[i] = nextEpisodeSeed(seeds[i]!, i);
      touched.add(seeds[i]!);
      counted[i] = started < count;
      started++;
      teachers[i]!.reset(batch.envs[i]!);
    }
  }
  const all = new Float32Array(chunks.length * f);
  chunks.forEach((row, k) => all.set(row, k * f));
  batch.close();
  return { featureSize: f, features: all, actions: Int32Array.from(labels), episodes, seeds: [...touched] };
}

/** Plays `count` demonstration episodes with the scripted teacher and records (features, teacher action). */
export function recordDemonstrations(
  task: TaskSpec,
  count: number,
  seed: number,
  noise = DEFAULT_NOISE,
  onEpisode?: (done: number, total: number, successes: number) => void,
): Demonstrations {
  const random = new Rng(seed ^ 0xd3);
  // The recording noise draws from the teacher's stream, as it always has: a seed's demonstrations stay the same.
  const drive: Driver = () => (_i, label) => (random.next() < noise ? Math.floor(random.next() * GAME_FACTS.actions.length) : label);
  return recordLabelled(task, count, seed, 0, drive, random, onEpisode);
}

/**
 * One DAgger round (Ross, Gordon & Bagnell 2011): the student policy drives (sampling its actions, as held-out
 * evaluation does) and the teacher labels the states the student reaches. Its labels are kept but the plan's yaw
 * turns, and its recovery labels always (Demonstrator.recovering: climbing out of a shaft, looking up from the
 * floor, the quicker tool, away from bedrock): the plan's turns point at a target the student cannot see, and
 * cloning them taught a policy that turns in place (explore-diamond seed 7: turning 80 % of its steps, 3.3 % of 30
 * held-out episodes). The sighted teacher (`teacher: 'sight'`) turns only for what the student sees (a target in
 * view, lava or a drop ahead), so all its labels are kept, and its tunnel follows the heading the student takes
 * (Demonstrator.followsStudent).
 * Episodes end at the task's training episode length.
 */
export function recordStudentStates(
  task: TaskSpec,
  net: PolicyNetwork,
  count: number,
  seed: number,
  round: number,
  onEpisode?: (done: number, total: number, successes: number) => void,
): Demonstrations {
  const student = new Rng(hash32(seed, round, 0xda99));
  const k = GAME_FACTS.actions.length;
  const drive: Driver = (features) => {
    const rows = features.length / net.config.featureSize;
    const sampled = sampleActions(net.actionProbs(features, rows), rows, k, student);
    return (i) => sampled[i]!;
  };
  return recordLabelled(
    withTrainingEpisodes(task, task.trainEpisodeSteps),
    count,
    seed,
    round,
    drive,
    new Rng(hash32(seed, round, 0x7ea)),
    onEpisode,
    // The sighted teacher's turns follow what the student sees (a target in view, lava or a drop in front): all kept.
    (t, label) => task.teacher === 'sight' || t.recovering || !YAW_TURNS.has(label),
    true,
  );
}

const YAW_TURNS = new Set([GAME_FACTS.actions.indexOf('turn_left'), GAME_FACTS.actions.indexOf('turn_right')]);

/** All samples of `parts`, and every world seed any of them touched. */
export function aggregate(parts: Demonstrations[]): Demonstrations {
  const f = parts[0]!.featureSize;
  const samples = parts.reduce((sum, p) => sum + p.actions.length, 0);
  const features = new Float32Array(samples * f);
  const actions = new Int32Array(samples);
  let at = 0;
  for (const p of parts) {
    features.set(p.features, at * f);
    actions.set(p.actions, at);
    at += p.actions.length;
  }
  const seeds = new Set(parts.flatMap((p) => p.seeds));
  return { featureSize: f, features, actions, episodes: parts.flatMap((p) => p.episodes), seeds: [...seeds] };
}

const meanSteps = (episodes: Demonstrations['episodes']) => episodes.reduce((s, e) => s + e.steps, 0) / Math.max(1, episodes.length);

/** Behaviour cloning: cross-entropy of the policy head on the teacher's actions (the value head is left to
 * PPO's value pre-training). Returns the last epoch's mean loss and the accuracy on all samples. */
export function behaviourClone(
  net: PolicyNetwork,
  demos: Demonstrations,
  epochs: number,
  rng: Rng,
  onEpoch?: (done: number, total: number, loss: number) => void,
): { loss: number; accuracy: number } {
  const total = demos.actions.length,
    f = demos.featureSize,
    k = GAME_FACTS.actions.length;
  // One minibatch step (the loss before it) on whichever engine the network is on.
  let step: (x: Float32Array, y: Int32Array) => number;
  let dispose = () => {};
  if (net instanceof FusedActorCritic) {
    const adam = new FusedAdam(net, LEARNING_RATE);
    step = (x, y) => {
      const ws = lossWorkspace(net, y.length);
      const loss = crossEntropyAndGradient(net, x, y, ws);
      adam.step(ws.grads, 1);
      return loss;
    };
  } else {
    const tfNet = net as ActorCritic;
    const optimizer = tf.train.adam(LEARNING_RATE);
    dispose = () => optimizer.dispose();
    step = (x, y) => {
      const value = tf.tidy(() => {
        const xs = tf.tensor2d(x, [y.length, f]);
        const target = tf.oneHot(tf.tensor1d(y, 'int32'), k);
        const { value: cost, grads } = tf.variableGrads(() => {
          const logp = tf.logSoftmax(tfNet.forward(xs).logits);
          return tf.neg(tf.mean(tf.sum(tf.mul(target, logp), 1))) as tf.Scalar;
        }, tfNet.variables);
        optimizer.applyGradients(Object.keys(grads).map((name) => ({ name, tensor: grads[name]! })));
        return cost;
      });
      const loss = value.dataSync()[0]!;
      value.dispose();
      return loss;
    };
  }
  const order = new Int32Array(total).map((_, i) => i);
  let loss = 0;
  onEpoch?.(0, epochs, Number.NaN);
  try {
    for (let epoch = 0; epoch < epochs; epoch++) {
      for (let i = total - 1; i > 0; i--) {
        const j = Math.floor(rng.next() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      let sum = 0,
        batches = 0;
      for (let start = 0; start < total; start += BATCH) {
        const idx = order.subarray(start, Math.min(total, start + BATCH));
        const x = new Float32Array(idx.length * f),
          y = new Int32Array(idx.length);
        idx.forEach((r, m) => {
          x.set(demos.features.subarray(r * f, (r + 1) * f), m * f);
          y[m] = demos.actions[r]!;
        });
        sum += step(x, y);
        batches++;
      }
      loss = sum / Math.max(1, batches);
      onEpoch?.(epoch + 1, epochs, loss);
    }
  } finally {
    dispose();
  }
  let correct = 0;
  for (let start = 0; start < total; start += 4096) {
    const rows = Math.min(4096, total - start);
    const { probs } = net.evaluate(demos.features.subarray(start * f, (start + rows) * f), rows);
    const greedy = sampleActions(probs, rows, k, rng, true);
    for (let r = 0; r < rows; r++) if (greedy[r] === demos.actions[start + r]) correct++;
  }
  return { loss, accuracy: total ? correct / total : 0 };
}

export interface PretrainOptions {
  task: string | TaskSpec;
  out: string;
  demos?: number;
  seed?: number;
  epochs?: number;
  noise?: number;
  /** DAgger rounds after the first clone (default: the task's `daggerRounds`, else DEFAULT_DAGGER_ROUNDS). */
  daggerRounds?: number;
  /** Held-out evaluation episodes (0 skips). Default 100. */
  evalEpisodes?: number;
  /** Parallel envs of the evaluation (default: all its episodes at once, up to 100). */
  evalEnvs?: number;
  backend?: BackendChoice;
  overwrite?: boolean;
  workers?: number;
  /** Progress lines. */
  log?: (line: string) => void;
  /** Each demonstration episode recorded (0 when recording starts): episodes so far, of all, and how many the teacher won. */
  onDemonstration?: (done: number, total: number, successes: number) => void;
  /** Each behaviour-cloning epoch done (0 when cloning starts), with its mean loss. */
  onEpoch?: (done: number, total: number, loss: number) => void;
  /** Each episode of a DAgger round (0 when the round starts): episodes so far, of all, and how many the student won. */
  onDaggerEpisode?: (round: number, done: number, total: number, successes: number) => void;
  onEvalEpisode?: (done: number, total: number) => void;
}

/** `DIR/pretrain.json`. */
export interface PretrainRecord {
  task: string;
  seed: number;
  demos: number;
  noise: number;
  epochs: number;
  samples: number;
  feature_size: number;
  teacher: RateEstimate & { avg_steps: number };
  behaviour_cloning: { loss: number; accuracy: number };
  /** One entry per DAgger round: the student's episodes (cut at the training episode length) and the samples
   * the teacher labelled; `behaviour_cloning` is then the last re-clone, on all samples. */
  dagger: { round: number; student: RateEstimate & { avg_steps: number }; samples: number }[];
  eval: RateEstimate;
  backend: string;
  wall_seconds: number;
}

/** Records demonstrations, clones them, writes the checkpoint and evaluates it on held-out worlds. */
export async function pretrain(options: PretrainOptions): Promise<{ record: PretrainRecord; summary: RunSummary }> {
  const start = Date.now();
  const task = typeof options.task === 'string' ? resolveTask(options.task) : options.task;
  const out = path.resolve(options.out);
  const demos = options.demos ?? DEFAULT_DEMOS,
    seed = options.seed ?? 0,
    epochs = options.epochs ?? DEFAULT_EPOCHS;
  const noise = options.noise ?? DEFAULT_NOISE;
  const daggerRounds = options.daggerRounds ?? task.daggerRounds ?? DEFAULT_DAGGER_ROUNDS;
  if (existsSync(path.join(out, RUN_FILES.checkpoint))) {
    if (!options.overwrite) throw new CommandError(`${out} already holds a checkpoint; pass --overwrite to replace it, or choose another --out`);
    for (const name of [RUN_FILES.checkpoint, RUN_FILES.summary, PRETRAIN_FILE, path.dirname(RUN_FILES.episodes)])
      rmSync(path.join(out, name), { recursive: true, force: true });
  }
  const backend = await ensureBackend(options.backend ?? 'auto');
  options.log?.(
    `pretrain ${task.id}: ${demos} demonstration episode${demos === 1 ? '' : 's'} (seed ${seed}), behaviour cloning ${epochs} epochs` +
      (daggerRounds > 0 ? `, ${daggerRounds} DAgger round${daggerRounds === 1 ? '' : 's'} of ${demos} student episodes` : '') +
      `, backend ${backend.name}`,
  );
  const teacherDemos = recordDemonstrations(task, demos, seed, noise, options.onDemonstration);
  let recorded = teacherDemos;
  const rng = new Rng(seed ^ 0xbc);
  const net = newNetwork(
    engineOf(backend),
    { featureSize: recorded.featureSize, numActions: GAME_FACTS.actions.length, hidden: HIDDEN },
    new Rng(seed ^ 0x1417),
  );
  try {
    let bc = behaviourClone(net, recorded, epochs, rng, options.onEpoch);
    const dagger: PretrainRecord['dagger'] = [];
    for (let round = 1; round <= daggerRounds; round++) {
      const student = recordStudentStates(task, net, demos, seed, round, (done, total, wins) => options.onDaggerEpisode?.(round, done, total, wins));
      recorded = aggregate([recorded, student]);
      const wins = student.episodes.filter((e) => e.success).length;
      dagger.push({
        round,
        student: { ...wilson(wins, student.episodes.length), avg_steps: meanSteps(student.episodes) },
        samples: student.actions.length,
      });
      bc = behaviourClone(net, recorded, epochs, rng, options.onEpoch);
    }
    mkdirSync(out, { recursive: true });
    savePolicy(net, path.join(out, RUN_FILES.checkpoint), task.id, { worldSeeds: recorded.seeds });

    const evalEpisodes = options.evalEpisodes ?? DEFAULT_EVAL_EPISODES;
    let evalSummary: RunSummary['eval'] = summarise([]);
    if (evalEpisodes > 0) {
      options.onEvalEpisode?.(0, evalEpisodes);
      // As `eval` evaluates the checkpoint just written (its policy.json's actions and demonstration worlds).
      const policy = { net, file: { numActions: GAME_FACTS.actions.length, worldSeeds: recorded.seeds } };
      const result = await evaluatePolicy(policy, null, {
        task,
        episodes: evalEpisodes,
        envs: Math.min(evalEpisodes, options.evalEnvs ?? 100),
        seed,
        sandbox: null,
        workers: options.workers,
        onEpisode: options.onEvalEpisode,
      });
      writeEvalRecords(out, result.episodes);
      evalSummary = result.summary;
    }
    const teacherWins = teacherDemos.episodes.filter((e) => e.success).length;
    const wall = (Date.now() - start) / 1000;
    const record: PretrainRecord = {
      task: task.id,
      seed,
      demos,
      noise,
      epochs,
      samples: recorded.actions.length,
      feature_size: recorded.featureSize,
      teacher: { ...wilson(teacherWins, teacherDemos.episodes.length), avg_steps: meanSteps(teacherDemos.episodes) },
      behaviour_cloning: bc,
      dagger,
      eval: wilson(Math.round(evalSummary.success_rate * evalSummary.episodes), evalSummary.episodes),
      backend: backend.name,
      wall_seconds: wall,
    };
    const summary: RunSummary = {
      task: task.id,
      task_file: task.file ?? null,
      reward_file: null,
      reward_sha256: null,
      seed,
      env: 'sim',
      env_steps: recorded.actions.length,
      wall_seconds: wall,
      backend: backend.name,
      // "Training" here is the teacher's demonstrations: their success, over all of them.
      train: {
        updates: epochs,
        frames: recorded.actions.length,
        mean_return: 0,
        success_rate: record.teacher.rate,
        entropy: 0,
        fps: 0,
        success: {
          ...rateRecord(teacherWins, teacherDemos.episodes.length),
          started_from_frame: 0,
          started_to_frame: teacherDemos.actions.length,
          mean_return: null,
        },
      },
      eval: evalSummary,
      generalisation_gap: null,
    };
    writeAtomic(out, path.join(out, PRETRAIN_FILE), JSON.stringify(record, null, 2) + '\n');
    writeAtomic(out, path.join(out, RUN_FILES.summary), JSON.stringify(summary, null, 2) + '\n');
    return { record, summary };
  } finally {
    net.dispose();
  }
}

// ---- command line ----

const PRETRAIN_SPEC = {
  command: 'pretrain',
  summary:
    "Record demonstrations of a scripted teacher (the task's `teacher`: full world access by default, or only what the agent sees) and behaviour-clone a foundation policy from them: a checkpoint for `train --init` and `eval`, evaluated on held-out worlds.",
  options: {
    task: { type: 'string', description: 'built-in task id or task file', valueName: 'T' },
    out: { type: 'string', description: 'folder for the checkpoint and its evaluation', valueName: 'DIR' },
    demos: {
      type: 'int',
      min: 1,
      default: DEFAULT_DEMOS,
      description: 'demonstration episodes (kept few on purpose: a start, not the answer)',
      valueName: 'N',
    },
    seed: { type: 'int', min: 0, default: 0, description: 'seed of the demonstration worlds, initialisation and evaluation', valueName: 'S' },
    epochs: { type: 'int', min: 1, default: DEFAULT_EPOCHS, description: 'behaviour-cloning passes over the demonstrations', valueName: 'K' },
    'dagger-rounds': {
      type: 'int',
      min: 0,
      max: 20,
      description:
        "DAgger rounds after the first clone: each lets the clone play N episodes (N = --demos, cut at the task's training episode length), the teacher labels the states it reaches (not the world-access planner's yaw turns towards a target the clone cannot see; all of the sighted teacher's), and the clone is trained again on all labels so far (default: the task's setup, else 0)",
      valueName: 'R',
    },
    noise: {
      type: 'number',
      min: 0,
      max: 1,
      default: DEFAULT_NOISE,
      description: "chance that a recorded step executes a random action (the label stays the teacher's)",
      valueName: 'P',
    },
    'eval-episodes': { type: 'int', min: 0, default: DEFAULT_EVAL_EPISODES, description: 'held-out evaluation episodes (0 skips)', valueName: 'K' },
    backend: { type: 'string', choices: BACKEND_CHOICES, default: 'auto', description: 'network engine (see train --help)' },
    overwrite: { type: 'boolean', description: 'replace a checkpoint already in DIR' },
  },
} as const satisfies CommandSpec<Record<string, OptionSpec>>;

export async function pretrainCommand(argv: string[]): Promise<number> {
  return runCommand('pretrain', async () => {
    const { values: v } = parseCommandArgs(PRETRAIN_SPEC, argv);
    if (!v.task) throw new UsageError('--task is required');
    if (!v.out) throw new UsageError('--out DIR is required');
    // Progress like train's: each stage's bar (a line per tenth when stderr is not a terminal).
    let demonstrations: StageProgress | null = null;
    let cloning: StageProgress | null = null;
    let evaluation: StageProgress | null = null;
    let daggerStage: StageProgress | null = null;
    const { record } = await pretrain({
      task: v.task,
      out: v.out,
      demos: v.demos,
      seed: v.seed,
      epochs: v.epochs,
      noise: v.noise,
      daggerRounds: v['dagger-rounds'],
      evalEpisodes: v['eval-episodes'],
      backend: v.backend as BackendChoice,
      overwrite: v.overwrite,
      log: (line) => process.stderr.write(line + '\n'),
      onDemonstration: (done, total, successes) => {
        if (done === 0) demonstrations = new StageProgress('recording demonstrations', 'episodes');
        else demonstrations?.update(done, total, `teacher succeeded in ${successes}`);
      },
      onEpoch: (done, total, loss) => {
        if (done === 0) cloning = new StageProgress('behaviour cloning', 'epochs');
        else cloning?.update(done, total, `loss ${loss.toFixed(3)}`);
      },
      onDaggerEpisode: (round, done, total, successes) => {
        if (done === 0) daggerStage = new StageProgress(`DAgger round ${round}: the clone plays, the teacher labels`, 'episodes');
        else daggerStage?.update(done, total, `the clone succeeded in ${successes}`);
      },
      onEvalEpisode: (done, total) => {
        if (done === 0) {
          process.stderr.write(`evaluating the foundation policy on ${total} held-out worlds\n`);
          evaluation = new StageProgress('evaluating', 'episodes');
        } else evaluation?.update(done, total);
      },
    });
    const lines = [
      `teacher: ${formatRate(record.teacher)} succeeded (avg ${record.teacher.avg_steps.toFixed(0)} steps); ${record.samples.toLocaleString('en-US')} samples`,
      ...record.dagger.map(
        (d) =>
          `DAgger round ${d.round}: the clone succeeded in ${formatRate(d.student)} of its episodes (avg ${d.student.avg_steps.toFixed(0)} steps); ${d.samples.toLocaleString('en-US')} states labelled by the teacher`,
      ),
      `behaviour cloning: loss ${record.behaviour_cloning.loss.toFixed(3)}, accuracy on the ${record.dagger.length > 0 ? 'demonstrations and DAgger labels' : 'demonstrations'} ${(record.behaviour_cloning.accuracy * 100).toFixed(1)} %`,
      record.eval.n > 0 ? `foundation policy, held-out success: ${formatRate(record.eval)}` : 'foundation policy: not evaluated (--eval-episodes 0)',
      `checkpoint: ${path.join(path.resolve(v.out), RUN_FILES.checkpoint)} (fine-tune with \`rewardsmith train REWARD --task ${record.task} --init ${v.out} --out RUN\`)`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
    return 0;
  });
}
