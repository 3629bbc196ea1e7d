// The agent: an actor-critic MLP over the environment's feature vector (two tanh hidden layers each for
// the policy and the value function), evaluated for all environments in one batch; its on-disk form; and
// the seeded random stream used for initialisation, action sampling and minibatch order (so a run is
// reproducible and a resumed run continues the same stream).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { makeFolder, writeAtomic } from '../files';
import { readRecordBytes, readRecordJson } from '../records';
import * as tf from '@tensorflow/tfjs-core';
import { GAME_FACTS } from '../schema';
import { Mulberry32 } from '../seeds';

/** The policy's random stream (action sampling, minibatch shuffles, initial weights): the one PRNG of seeds.ts. */
export class Rng extends Mulberry32 {
  /** The stream's position as an unsigned integer: checkpoints store it (`rng`) and resume from it. */
  get state(): number {
    return this.s >>> 0;
  }
  set state(value: number) {
    this.s = value | 0;
  }
  /** Standard normal (Box-Muller). */
  normal(): number {
    const u = 1 - this.next(),
      v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}

export interface PolicyConfig {
  featureSize: number;
  numActions: number;
  /** Hidden layer widths, shared by the policy and the value network (separate weights). */
  hidden: number[];
}

/** `DIR/checkpoint/policy.json`: what a checkpoint's weights are. */
export interface PolicyFile extends PolicyConfig {
  format: 'rewardsmith-policy';
  version: 1;
  task: string;
  actions: readonly string[];
  /** Variable shapes in the order their values are concatenated in weights.bin (float32, little endian). */
  shapes: number[][];
  /**
   * Seeds of the worlds this policy learned from outside a PPO run (behaviour-cloning demonstrations): every
   * held-out evaluation of it, or of a run started from it, skips them.
   */
  worldSeeds?: number[];
}

export const POLICY_FILE = 'policy.json';
export const WEIGHTS_FILE = 'weights.bin';

/** What acting, checkpoints and training need of a policy network, whichever engine computes it. */
export interface PolicyNetwork {
  readonly config: PolicyConfig;
  /** Variable shapes in the order their values are concatenated in weights.bin. */
  readonly shapes: number[][];
  /** Action probabilities (batch × actions) and values (batch) for a batch of feature rows. */
  evaluate(features: Float32Array, batch: number): { probs: Float32Array; values: Float32Array };
  /** `evaluate`'s probabilities alone, the same bits; the fused network leaves out the value head's forward pass. */
  actionProbs(features: Float32Array, batch: number): Float32Array;
  /** A row's outputs are the same bits in any batch (evaluating a batch's rows in slices gives what the batch
   * gives): true for the fused network, whose rows' sums run alone; TensorFlow.js's kernels promise nothing. */
  readonly rowsIndependent: boolean;
  /** All weights, concatenated in variable order. */
  weights(): Float32Array;
  setWeights(values: Float32Array): void;
  dispose(): void;
}

export interface ForwardResult {
  logits: tf.Tensor2D;
  value: tf.Tensor1D;
}

/** Policy and value MLPs as raw variables (tfjs-core only: fewer layers of abstraction, fast on wasm). */
export class ActorCritic implements PolicyNetwork {
  readonly rowsIndependent = false;
  readonly variables: tf.Variable[];
  private readonly policyLayers: [tf.Variable, tf.Variable][];
  private readonly valueLayers: [tf.Variable, tf.Variable][];

  constructor(
    readonly config: PolicyConfig,
    rng: Rng,
  ) {
    const sizes = [config.featureSize, ...config.hidden];
    // Scaled-normal init; the last policy layer starts near zero so the first policy is almost uniform
    // (maximum exploration), and the value head starts at unit scale.
    const layer = (fanIn: number, fanOut: number, gain: number): [tf.Variable, tf.Variable] => {
      const w = new Float32Array(fanIn * fanOut);
      const scale = gain / Math.sqrt(fanIn);
      for (let i = 0; i < w.length; i++) w[i] = rng.normal() * scale;
      return [tf.variable(tf.tensor2d(w, [fanIn, fanOut])), tf.variable(tf.zeros([fanOut]))];
    };
    const trunk = () => sizes.slice(1).map((out, i) => layer(sizes[i]!, out, Math.SQRT2));
    const last = sizes[sizes.length - 1]!;
    this.policyLayers = [...trunk(), layer(last, config.numActions, 0.01)];
    this.valueLayers = [...trunk(), layer(last, 1, 1)];
    this.variables = [...this.policyLayers, ...this.valueLayers].flat();
  }

  get shapes(): number[][] {
    return this.variables.map((v) => [...v.shape]);
  }

  /** Logits (batch × actions) and values (batch). Call inside tf.tidy or dispose the results. */
  forward(x: tf.Tensor2D): ForwardResult {
    const mlp = (layers: [tf.Variable, tf.Variable][]) => {
      let h: tf.Tensor2D = x;
      layers.forEach(([w, b], i) => {
        const z = tf.add(tf.matMul(h, w as tf.Tensor2D), b) as tf.Tensor2D;
        h = i < layers.length - 1 ? tf.tanh(z) : z;
      });
      return h;
    };
    return { logits: mlp(this.policyLayers), value: tf.reshape(mlp(this.valueLayers), [-1]) as tf.Tensor1D };
  }

  /** Action probabilities and values for a batch of feature rows, on the CPU side. */
  evaluate(features: Float32Array, batch: number): { probs: Float32Array; values: Float32Array } {
    const [probs, values] = tf.tidy(() => {
      const { logits, value } = this.forward(tf.tensor2d(features, [batch, this.config.featureSize]));
      return [tf.softmax(logits), value];
    });
    const out = { probs: probs.dataSync() as Float32Array, values: values.dataSync() as Float32Array };
    probs.dispose();
    values.dispose();
    return out;
  }

  actionProbs(features: Float32Array, batch: number): Float32Array {
    return this.evaluate(features, batch).probs;
  }

  /** All weights, concatenated in variable order. */
  weights(): Float32Array {
    const parts = this.variables.map((v) => v.dataSync() as Float32Array);
    const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }

  setWeights(values: Float32Array): void {
    let o = 0;
    for (const v of this.variables) {
      const n = v.size;
      if (o + n > values.length) throw new Error('checkpoint weights are shorter than the network');
      v.assign(tf.tensor(values.subarray(o, o + n), v.shape));
      o += n;
    }
    if (o !== values.length) throw new Error('checkpoint weights are longer than the network');
  }

  dispose(): void {
    for (const v of this.variables) v.dispose();
  }
}

/** Writes a network's policy.json + weights.bin into `dir` (refusing a symbolic link in its place: the folder may be someone else's). */
export function savePolicy(net: PolicyNetwork, dir: string, task: string, extra: Pick<PolicyFile, 'worldSeeds'> = {}): void {
  makeFolder(dir);
  const file: PolicyFile = {
    format: 'rewardsmith-policy',
    version: 1,
    task,
    actions: GAME_FACTS.actions,
    ...net.config,
    shapes: net.shapes,
    ...extra,
  };
  writeAtomic(dir, path.join(dir, WEIGHTS_FILE), float32Bytes(net.weights()));
  writeAtomic(dir, path.join(dir, POLICY_FILE), JSON.stringify(file, null, 2) + '\n');
}

/**
 * Reads a checkpoint's policy.json and weights.bin (checked against each other by the network's setWeights),
 * each through the checked reader: a checkpoint may be someone else's. `root` is the folder the user named (a
 * run folder, or the checkpoint folder itself): no file is read from outside it, even through a linked folder.
 */
export function readPolicyCheckpoint(dir: string, root = dir): { file: PolicyFile; weights: Float32Array } {
  const jsonPath = path.join(dir, POLICY_FILE);
  const file = readRecordJson(jsonPath, root) as PolicyFile | null;
  if (file?.format !== 'rewardsmith-policy' || file.version !== 1) throw new Error(`${jsonPath}: unknown checkpoint format`);
  return { file, weights: readFloat32(path.join(dir, WEIGHTS_FILE), root) };
}

export function float32Bytes(values: Float32Array): Buffer {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
}

/**
 * A file of float32 values (weights, optimizer moments), each one checked to be finite: a damaged or forged
 * file (all 0xFF bytes are NaNs) is refused with its name, rather than trained on or evaluated as a policy
 * that scores "0 %". Read within `root` (readRecordBytes).
 */
export function readFloat32(file: string, root = path.dirname(file)): Float32Array {
  const buf = readRecordBytes(file, root);
  if (buf.byteLength % 4 !== 0) throw new Error(`${file}: ${buf.byteLength} bytes, not a whole number of float32 values; the file is damaged`);
  const copy = new Uint8Array(buf.byteLength);
  copy.set(buf);
  const values = new Float32Array(copy.buffer, 0, copy.byteLength / 4);
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i]!))
      throw new Error(
        `${file}: value ${i} of ${values.length} is ${values[i]}, not a finite number; the file is damaged, nothing was trained or evaluated with it`,
      );
  }
  return values;
}

/** Samples one action per row from row-major probabilities (or takes the most likely one when greedy). */
export function sampleActions(probs: Float32Array, batch: number, numActions: number, rng: Rng, greedy = false): Int32Array {
  const actions = new Int32Array(batch);
  for (let i = 0; i < batch; i++) {
    const row = i * numActions;
    let pick = numActions - 1;
    if (greedy) {
      for (let a = 0, best = -1; a < numActions; a++) if (probs[row + a]! > best) (best = probs[row + a]!), (pick = a);
    } else {
      let u = rng.next();
      for (let a = 0; a < numActions; a++) {
        u -= probs[row + a]!;
        if (u < 0) {
          pick = a;
          break;
        }
      }
    }
    actions[i] = pick;
  }
  return actions;
}

/** A run folder or a checkpoint folder → the folder that holds policy.json. */
export function resolveCheckpointDir(dir: string): string {
  // Where policy.json is; it is read (checked) by readPolicyCheckpoint.
  for (const candidate of [dir, path.join(dir, 'checkpoint')]) if (existsSync(path.join(candidate, POLICY_FILE))) return candidate;
  throw new Error(`${dir}: no checkpoint here (expected ${POLICY_FILE} in it or in its checkpoint/ folder)`);
}
