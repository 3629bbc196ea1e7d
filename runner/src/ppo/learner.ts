// The network and its optimizer behind one interface, whichever engine computes them: TensorFlow.js (policy.ts's
// ActorCritic, ppo.ts's ppoUpdate, tf.train.adam) or the fused plain-JS network (fused.ts). Both read and write
// the same checkpoint files: weights.bin in variable order, and optimizer.json + optimizer.bin as TensorFlow.js's
// Adam saves itself (the iteration count, then every variable's first moment, then every second moment), so a
// checkpoint from one engine resumes on the other.
import { writeAtomic } from '../files';
import { readRecordJson } from '../records';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { ensureBackend, type BackendChoice, type BackendSelection } from './backend';
import { FusedActorCritic, FusedAdam, fusedPpoUpdate } from './fused';
import { ValueThread } from './value-thread';
import {
  ActorCritic,
  float32Bytes,
  POLICY_FILE,
  readFloat32,
  readPolicyCheckpoint,
  resolveCheckpointDir,
  Rng,
  sampleActions,
  WEIGHTS_FILE,
  type PolicyConfig,
  type PolicyFile,
  type PolicyNetwork,
} from './policy';
import { ppoUpdate, type PpoHyperparameters, type RolloutBuffer, type UpdateStats } from './ppo';
import type { PhaseProfile } from './profile';

/** Which implementation computes the network: TensorFlow.js on the selected backend, or the fused JS one. */
export type Engine = 'tfjs' | 'js';

export const engineOf = (backend: BackendSelection): Engine => (backend.name === 'js' ? 'js' : 'tfjs');

export function newNetwork(engine: Engine, config: PolicyConfig, rng: Rng): PolicyNetwork {
  return engine === 'js' ? new FusedActorCritic(config, rng) : new ActorCritic(config, rng);
}

/** Reads a checkpoint folder's network (policy.json + weights.bin) onto the engine, from within `root` (readPolicyCheckpoint). */
export function loadNetwork(dir: string, engine: Engine, root = dir): { net: PolicyNetwork; file: PolicyFile } {
  const { file, weights } = readPolicyCheckpoint(dir, root);
  const net = newNetwork(engine, { featureSize: file.featureSize, numActions: file.numActions, hidden: file.hidden }, new Rng(0));
  try {
    net.setWeights(weights);
  } catch (err) {
    net.dispose();
    throw new Error(`${path.join(dir, WEIGHTS_FILE)}: ${(err as Error).message} described in ${POLICY_FILE}`);
  }
  return { net, file };
}

/** One saved optimizer variable: its name (informative only: Adam restores by position) and its values. */
export interface OptimizerWeight {
  name: string;
  shape: number[];
  values: Float32Array;
}

export interface Learner {
  readonly engine: Engine;
  readonly net: PolicyNetwork;
  /** One PPO update on a filled buffer with advantages computed. */
  update(
    buffer: RolloutBuffer,
    hp: PpoHyperparameters,
    rng: Rng,
    opts: { initNet: PolicyNetwork | null; valueOnly: boolean; profile?: PhaseProfile },
  ): UpdateStats;
  optimizerWeights(): Promise<OptimizerWeight[]>;
  setOptimizerWeights(weights: OptimizerWeight[]): Promise<void>;
  dispose(): void;
}

/**
 * Where the fused engine computes an update: the value head's share on a thread of its own beside this one's
 * (value-thread.ts; on a single core it stays here), or all of it on this thread. The same bits either way.
 */
export type LearnerThreads = 'value-thread' | 'one';

/** PPO on `net` (from newNetwork/loadNetwork with the same engine) with Adam at `learningRate`. */
export function createLearner(engine: Engine, net: PolicyNetwork, learningRate: number, threads: LearnerThreads = 'value-thread'): Learner {
  return engine === 'js' ? jsLearner(net as FusedActorCritic, learningRate, threads) : tfjsLearner(net as ActorCritic, learningRate);
}

function tfjsLearner(net: ActorCritic, learningRate: number): Learner {
  const optimizer = tf.train.adam(learningRate);
  return {
    engine: 'tfjs',
    net,
    update: (buffer, hp, rng, opts) => ppoUpdate(net, optimizer, buffer, hp, rng, { initNet: opts.initNet as ActorCritic | null, valueOnly: opts.valueOnly }),
    async optimizerWeights() {
      const named = await optimizer.getWeights();
      // The iteration count is an int32 tensor; it is stored as a float like the rest.
      return named.map((w) => ({ name: w.name, shape: [...w.tensor.shape], values: Float32Array.from(w.tensor.dataSync() as ArrayLike<number>) }));
    },
    async setOptimizerWeights(weights) {
      await optimizer.setWeights(weights.map(({ name, shape, values }) => ({ name, tensor: tf.tensor(values, shape) })));
    },
    dispose: () => optimizer.dispose(),
  };
}

function jsLearner(net: FusedActorCritic, learningRate: number, threads: LearnerThreads): Learner {
  const adam = new FusedAdam(net, learningRate);
  const names = net.params.map((_, i) => `${i}`);
  // Started with the first update (a learner that never updates, e.g. behaviour cloning's, starts none).
  let valueThread: ValueThread | null | undefined;
  return {
    engine: 'js',
    net,
    update: (buffer, hp, rng, opts) => {
      if (valueThread === undefined) valueThread = threads === 'value-thread' ? ValueThread.start(net) : null;
      return fusedPpoUpdate(net, adam, buffer, hp, rng, { ...opts, initNet: opts.initNet as FusedActorCritic | null, valueThread });
    },
    async optimizerWeights() {
      return [
        { name: 'iter', shape: [], values: Float32Array.of(adam.iterations) },
        ...adam.m.map((m, i) => ({ name: `${names[i]}/m`, shape: net.shapes[i]!, values: m })),
        ...adam.v.map((v, i) => ({ name: `${names[i]}/v`, shape: net.shapes[i]!, values: v })),
      ];
    },
    async setOptimizerWeights(weights) {
      const k = net.params.length;
      if (weights.length !== 1 + 2 * k) throw new Error(`the optimizer state holds ${weights.length} variables; the network needs ${1 + 2 * k}`);
      adam.iterations = weights[0]!.values[0]!;
      for (let i = 0; i < k; i++) {
        for (const [moments, w] of [
          [adam.m, weights[1 + i]!],
          [adam.v, weights[1 + k + i]!],
        ] as const) {
          if (w.values.length !== moments[i]!.length)
            throw new Error(`optimizer variable ${w.name} has ${w.values.length} values; the network's has ${moments[i]!.length}`);
          moments[i]!.set(w.values);
        }
      }
    },
    dispose: () => {
      valueThread?.close();
      valueThread = undefined;
    },
  };
}

/** Writes the learner's optimizer state into a checkpoint folder (optimizer.json + optimizer.bin). */
export async function saveOptimizer(dir: string, learner: Learner): Promise<void> {
  const weights = await learner.optimizerWeights();
  const all = new Float32Array(weights.reduce((s, w) => s + w.values.length, 0));
  weights.reduce((o, w) => (all.set(w.values, o), o + w.values.length), 0);
  writeAtomic(dir, path.join(dir, 'optimizer.bin'), float32Bytes(all));
  writeAtomic(dir, path.join(dir, 'optimizer.json'), JSON.stringify(weights.map((w) => ({ name: w.name, shape: w.shape }))) + '\n');
}

export async function restoreOptimizer(dir: string, learner: Learner, root = dir): Promise<void> {
  // Checked as a layout by run-folder.ts's readCheckpoint, which found this checkpoint.
  const layout = readRecordJson(path.join(dir, 'optimizer.json'), root) as { name: string; shape: number[] }[];
  const values = readFloat32(path.join(dir, 'optimizer.bin'), root);
  let o = 0;
  const weights = layout.map(({ name, shape }) => {
    const size = shape.reduce((a, b) => a * b, 1);
    const w = { name, shape, values: values.slice(o, o + size) };
    o += size;
    return w;
  });
  await learner.setOptimizerWeights(weights);
}

/** A trained policy for rollouts and evaluation (`rollout --policy CHECKPOINT`, `eval CHECKPOINT`). */
export interface LoadedPolicy {
  task: string;
  featureSize: number;
  /** The backend the policy runs on. */
  backend: string;
  /** One action index (into GAME_FACTS.actions) per env for `numEnvs × featureSize` features. */
  act(features: Float32Array, numEnvs: number): Int32Array;
  dispose(): void;
}

/**
 * Loads the policy of a checkpoint (a run folder, or its `checkpoint/` folder). Actions are sampled from the
 * policy with a stream seeded by `seed` (the agent was trained stochastic; `greedy` takes the argmax).
 */
export async function loadPolicy(checkpointDir: string, opts: { backend?: BackendChoice; seed?: number; greedy?: boolean } = {}): Promise<LoadedPolicy> {
  const selection = await ensureBackend(opts.backend ?? 'auto');
  const dir = resolveCheckpointDir(checkpointDir);
  const { net, file } = loadNetwork(dir, engineOf(selection), checkpointDir);
  const rng = new Rng(opts.seed ?? 0);
  return {
    task: file.task,
    featureSize: file.featureSize,
    backend: selection.name,
    act(features, numEnvs) {
      if (features.length !== numEnvs * file.featureSize) {
        throw new Error(`the policy takes ${file.featureSize} features per env (trained on ${file.task}); got ${features.length / numEnvs}`);
      }
      return sampleActions(net.actionProbs(features, numEnvs), numEnvs, file.numActions, rng, opts.greedy ?? false);
    },
    dispose: () => net.dispose(),
  };
}
