// PPO with GAE on TensorFlow.js: the rollout buffer, advantage estimation, the paper's reward normaliser
// and the clipped-surrogate update (value loss, entropy bonus, optional KL to a frozen initial policy).
import * as tf from '@tensorflow/tfjs-core';
import type { ActorCritic } from './policy';
import type { Rng } from './policy';

export interface PpoHyperparameters {
  gamma: number;
  lambda: number;
  learningRate: number;
  clip: number;
  entropyCoef: number;
  valueCoef: number;
  /** Weight of KL(π ‖ π_init) when training from `--init` (the paper: 0.125). */
  klCoef: number;
  epochs: number;
  minibatches: number;
  maxGradNorm: number;
  /** Updates at the start of a run from `--init` that train only the value function (the paper: 2). */
  valuePretrainUpdates: number;
  /** Momentum of the running mean of |episode return| used to normalise rewards (the paper: 0.7). */
  returnMomentum: number;
  /** Divide rewards by max(R', 1), the running mean of |episode return| (the paper's normaliser); off: raw rewards. */
  normaliseReturns: boolean;
}

/** Defaults that learn from scratch on our symbolic observations (see README.md beside this file). */
export const DEFAULT_HYPERPARAMETERS: PpoHyperparameters = {
  gamma: 0.99,
  lambda: 0.95,
  learningRate: 1e-3,
  clip: 0.2,
  entropyCoef: 0.01,
  valueCoef: 0.5,
  klCoef: 0.125,
  epochs: 4,
  minibatches: 4,
  maxGradNorm: 0.5,
  valuePretrainUpdates: 2,
  returnMomentum: 0.7,
  normaliseReturns: true,
};

/** The paper's normaliser: r / max(R', 1) with R' a running mean (momentum 0.7) of |episode return|. */
export class ReturnNormaliser {
  constructor(
    public runningAbsReturn = 0,
    public initialised = false,
  ) {}
  /** Folds in the episodes that ended in the last rollout. */
  update(episodeReturns: number[], momentum: number): void {
    if (episodeReturns.length === 0) return;
    const meanAbs = episodeReturns.reduce((s, r) => s + Math.abs(r), 0) / episodeReturns.length;
    this.runningAbsReturn = this.initialised ? momentum * this.runningAbsReturn + (1 - momentum) * meanAbs : meanAbs;
    this.initialised = true;
  }
  get scale(): number {
    return 1 / Math.max(this.runningAbsReturn, 1);
  }
}

/** One rollout of `steps` × `numEnvs` transitions, row t*numEnvs + i. */
export class RolloutBuffer {
  readonly features: Float32Array;
  readonly actions: Int32Array;
  readonly logProbs: Float32Array;
  readonly values: Float32Array;
  /** Raw rewards from the reward function (normalised when advantages are computed). */
  readonly rewards: Float32Array;
  readonly dones: Uint8Array;
  /** 1 where the time limit cut the episode: the return goes on past the cut, estimated by `truncatedValues`. */
  readonly truncated: Uint8Array;
  /** The value of the state a cut episode stood in at its last step (0 elsewhere). */
  readonly truncatedValues: Float32Array;
  readonly advantages: Float32Array;
  readonly returns: Float32Array;
  length = 0;

  constructor(
    readonly steps: number,
    readonly numEnvs: number,
    readonly featureSize: number,
  ) {
    const size = steps * numEnvs;
    this.features = new Float32Array(size * featureSize);
    this.actions = new Int32Array(size);
    this.logProbs = new Float32Array(size);
    this.values = new Float32Array(size);
    this.rewards = new Float32Array(size);
    this.dones = new Uint8Array(size);
    this.truncated = new Uint8Array(size);
    this.truncatedValues = new Float32Array(size);
    this.advantages = new Float32Array(size);
    this.returns = new Float32Array(size);
  }

  /**
   * GAE(γ, λ) over the first `length` steps. An episode end cuts the trace. A success or a death ends the return
   * there; a time limit does not end the game, only the episode, and the policy does not see the clock, so the return
   * after a cut is estimated by the value of the state it stood in (otherwise the same state is worth nothing at step
   * 2,000 and something at step 1,999, and the value function learns noise).
   */
  computeAdvantages(lastValues: Float32Array, rewardScale: number, gamma: number, lambda: number): void {
    const n = this.numEnvs;
    for (let i = 0; i < n; i++) {
      let gae = 0;
      let nextValue = lastValues[i]!;
      for (let t = this.length - 1; t >= 0; t--) {
        const k = t * n + i;
        const notDone = this.dones[k] ? 0 : 1;
        const following = notDone ? nextValue : this.truncated[k] ? this.truncatedValues[k]! : 0;
        const delta = this.rewards[k]! * rewardScale + gamma * following - this.values[k]!;
        gae = delta + gamma * lambda * notDone * gae;
        this.advantages[k] = gae;
        this.returns[k] = gae + this.values[k]!;
        nextValue = this.values[k]!;
      }
    }
  }
}

export interface UpdateStats {
  policyLoss: number;
  valueLoss: number;
  entropy: number;
  /** KL to the initial policy when there is one, else the approximate KL between old and new policy. */
  kl: number;
  /** mean(log π_old(a) − log π(a)) over the minibatches: how far each minibatch's policy had moved from the data's. */
  approxKl: number;
  /** Share of samples whose probability ratio lay outside [1 − clip, 1 + clip]. */
  clipFraction: number;
}

/** One minibatch: rows of the buffer in shuffled order, advantages normalised within the minibatch. */
export interface Minibatch {
  size: number;
  /** The buffer rows it holds, in its order (row t*numEnvs + i of the rollout). */
  rows: Int32Array;
  x: Float32Array;
  actions: Int32Array;
  oldLogp: Float32Array;
  advantages: Float32Array;
  returns: Float32Array;
}

/**
 * The minibatches of one PPO update, epochs × minibatches, in the order both update paths (tfjs and fused) train
 * on them: a Fisher-Yates shuffle from `rng` per epoch, rows past the last whole minibatch left out. The
 * minibatch's arrays are reused for the next one: `fn` must not keep them.
 */
export function forEachMinibatch(buffer: RolloutBuffer, hp: PpoHyperparameters, rng: Rng, fn: (mb: Minibatch) => void, gatherFeatures = true): void {
  const total = buffer.length * buffer.numEnvs;
  // Without gatherFeatures, x is empty: the caller reads the rows' features from the buffer by mb.rows.
  const f = gatherFeatures ? buffer.featureSize : 0;
  const mbSize = Math.max(1, Math.floor(total / hp.minibatches));
  const order = new Int32Array(total).map((_, i) => i);
  // One set of arrays, refilled for each minibatch: `fn` uses a minibatch before the next one is drawn.
  const mb: Minibatch = {
    size: mbSize,
    rows: new Int32Array(mbSize),
    x: new Float32Array(mbSize * f),
    actions: new Int32Array(mbSize),
    oldLogp: new Float32Array(mbSize),
    advantages: new Float32Array(mbSize),
    returns: new Float32Array(mbSize),
  };
  for (let epoch = 0; epoch < hp.epochs; epoch++) {
    for (let i = total - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      const t = order[i]!;
      order[i] = order[j]!;
      order[j] = t;
    }
    for (let start = 0; start + mbSize <= total; start += mbSize) {
      const idx = order.subarray(start, start + mbSize);
      let mean = 0;
      for (let m = 0; m < mbSize; m++) {
        const k = idx[m]!;
        mb.rows[m] = k;
        if (f) mb.x.set(buffer.features.subarray(k * f, (k + 1) * f), m * f);
        mb.actions[m] = buffer.actions[k]!;
        mb.oldLogp[m] = buffer.logProbs[k]!;
        mb.advantages[m] = buffer.advantages[k]!;
        mb.returns[m] = buffer.returns[k]!;
        mean += mb.advantages[m]!;
      }
      // Per-minibatch advantage normalisation.
      const adv = mb.advantages;
      mean /= mbSize;
      let variance = 0;
      for (let m = 0; m < mbSize; m++) variance += (adv[m]! - mean) ** 2;
      const std = Math.sqrt(variance / mbSize) + 1e-8;
      for (let m = 0; m < mbSize; m++) adv[m] = (adv[m]! - mean) / std;
      fn(mb);
    }
  }
}

/**
 * The PPO loss on TensorFlow.js (call inside tf.variableGrads): valueCoef · mean (v − R)² + policyWeight ·
 * (−mean min(ρA, clip(ρ)A) − entropyCoef · H + klCoef · KL(π ‖ π_init)). `terms` are its parts, kept for the
 * caller to dispose: policy loss, value loss, entropy, KL (to π_init, else approximate), approximate KL, clip fraction.
 */
export function tfjsPpoLoss(
  net: ActorCritic,
  mb: Minibatch,
  hp: PpoHyperparameters,
  opts: { initLogp: tf.Tensor2D | null; policyWeight: number },
): { total: tf.Scalar; terms: tf.Scalar[] } {
  const xs = tf.tensor2d(mb.x, [mb.size, net.config.featureSize]);
  const actions = tf.oneHot(tf.tensor1d(mb.actions, 'int32'), net.config.numActions);
  const oldLogpT = tf.tensor1d(mb.oldLogp),
    advT = tf.tensor1d(mb.advantages),
    retT = tf.tensor1d(mb.returns);
  const { initLogp } = opts;
  const { logits, value } = net.forward(xs);
  const logpAll = tf.logSoftmax(logits);
  const logp = tf.sum(tf.mul(logpAll, actions), 1);
  const ratio = tf.exp(tf.sub(logp, oldLogpT));
  const clipped = tf.clipByValue(ratio, 1 - hp.clip, 1 + hp.clip);
  const policyLoss = tf.neg(tf.mean(tf.minimum(tf.mul(ratio, advT), tf.mul(clipped, advT)))) as tf.Scalar;
  const valueLoss = tf.mean(tf.square(tf.sub(value, retT))) as tf.Scalar;
  const probs = tf.exp(logpAll);
  const entropy = tf.neg(tf.mean(tf.sum(tf.mul(probs, logpAll), 1))) as tf.Scalar;
  const approxKl = tf.mean(tf.sub(oldLogpT, logp)) as tf.Scalar;
  const kl = (initLogp ? tf.mean(tf.sum(tf.mul(probs, tf.sub(logpAll, initLogp)), 1)) : approxKl) as tf.Scalar;
  const clipFraction = tf.mean(tf.cast(tf.greater(tf.abs(tf.sub(ratio, 1)), hp.clip), 'float32')) as tf.Scalar;
  const terms = [policyLoss, valueLoss, entropy, kl, approxKl, clipFraction].map((s) => tf.keep(s));
  let policyTerms = tf.sub(policyLoss, tf.mul(entropy, hp.entropyCoef));
  if (initLogp) policyTerms = tf.add(policyTerms, tf.mul(kl, hp.klCoef));
  return { total: tf.add(tf.mul(valueLoss, hp.valueCoef), tf.mul(policyTerms, opts.policyWeight)) as tf.Scalar, terms };
}

/** One PPO update (epochs × minibatches) on a filled buffer with advantages computed, on TensorFlow.js. */
export function ppoUpdate(
  net: ActorCritic,
  optimizer: tf.Optimizer,
  buffer: RolloutBuffer,
  hp: PpoHyperparameters,
  rng: Rng,
  opts: { initNet: ActorCritic | null; valueOnly: boolean },
): UpdateStats {
  const f = buffer.featureSize;
  const sums = { policyLoss: 0, valueLoss: 0, entropy: 0, kl: 0, approxKl: 0, clipFraction: 0 };
  let count = 0;
  // Value-only updates still pass every variable (with the policy terms weighted 0): Adam keys its moments
  // by position in the gradient list, so the list must be the same in every update.
  const policyWeight = opts.valueOnly ? 0 : 1;
  forEachMinibatch(buffer, hp, rng, (mb) => {
    const mbSize = mb.size;
    const parts = tf.tidy(() => {
      const initLogp = opts.initNet ? tf.logSoftmax(opts.initNet.forward(tf.tensor2d(mb.x, [mbSize, f])).logits) : null;
      let kept: tf.Scalar[] = [];
      const { grads } = tf.variableGrads(() => {
        const { total, terms } = tfjsPpoLoss(net, mb, hp, { initLogp, policyWeight });
        kept = terms;
        return total;
      }, net.variables);
      // Clip the global gradient norm.
      const names = Object.keys(grads);
      const norm = tf.sqrt(tf.addN(names.map((n) => tf.sum(tf.square(grads[n]!)))));
      const scale = tf.minimum(tf.scalar(1), tf.div(tf.scalar(hp.maxGradNorm), tf.add(norm, 1e-6)));
      optimizer.applyGradients(names.map((name) => ({ name, tensor: tf.mul(grads[name]!, scale) })));
      const stacked = tf.stack(kept);
      for (const t of kept) t.dispose();
      return stacked;
    });
    const v = parts.dataSync();
    parts.dispose();
    sums.policyLoss += v[0]!;
    sums.valueLoss += v[1]!;
    sums.entropy += v[2]!;
    sums.kl += v[3]!;
    sums.approxKl += v[4]!;
    sums.clipFraction += v[5]!;
    count++;
  });
  return {
    policyLoss: sums.policyLoss / count,
    valueLoss: sums.valueLoss / count,
    entropy: sums.entropy / count,
    kl: sums.kl / count,
    approxKl: sums.approxKl / count,
    clipFraction: sums.clipFraction / count,
  };
}

/** 1 − Var(R − V) / Var(R) over the buffer's returns and the values predicted when acting (1: perfect; ≤ 0: no better than the mean). */
export function explainedVariance(buffer: RolloutBuffer): number {
  const n = buffer.length * buffer.numEnvs;
  let meanR = 0,
    meanD = 0;
  for (let i = 0; i < n; i++) {
    meanR += buffer.returns[i]!;
    meanD += buffer.returns[i]! - buffer.values[i]!;
  }
  meanR /= n;
  meanD /= n;
  let varR = 0,
    varD = 0;
  for (let i = 0; i < n; i++) {
    varR += (buffer.returns[i]! - meanR) ** 2;
    varD += (buffer.returns[i]! - buffer.values[i]! - meanD) ** 2;
  }
  return varR === 0 ? Number.NaN : 1 - varD / varR;
}
