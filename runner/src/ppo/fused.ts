// The actor-critic MLP and its PPO loss in plain JavaScript on typed arrays: one forward pass over a whole batch,
// a hand-written backward pass and Adam, no tensors. At this network size (two 64-unit layers per head) the
// cost of TensorFlow.js is per-operation (dispatch, allocation, tiny matmuls), not arithmetic; a fused loop
// does the same arithmetic without it. Same initialisation stream, weights.bin layout and Adam as the tfjs
// path (policy.ts, ppo.ts), which stays the reference: runner/test/fused.test.ts checks the gradients against it.
import type { PolicyConfig, PolicyNetwork, Rng } from './policy';
import type { Minibatch, PpoHyperparameters, UpdateStats } from './ppo';
import { forEachMinibatch, type RolloutBuffer } from './ppo';
import { measured, type PhaseProfile } from './profile';

/** One dense layer: `out = in · W + b`, W row-major [fanIn, fanOut] (TensorFlow.js's layout). */
interface Dense {
  w: Float32Array;
  b: Float32Array;
  fanIn: number;
  fanOut: number;
}

/**
 * A batch of feature rows as its nonzero entries (most features are one-hot or absent: ~89 % zeros on
 * approach-tree), built once per batch and shared by both heads' first layers, forward and backward.
 */
export class SparseRows {
  readonly start: Int32Array;
  readonly index: Int32Array;
  readonly value: Float64Array;
  constructor(
    x: Float32Array,
    readonly rows: number,
    width: number,
  ) {
    let nnz = 0;
    for (let i = 0; i < rows * width; i++) if (x[i] !== 0) nnz++;
    this.start = new Int32Array(rows + 1);
    this.index = new Int32Array(nnz);
    this.value = new Float64Array(nnz);
    let k = 0;
    for (let m = 0; m < rows; m++) {
      this.start[m] = k;
      const o = m * width;
      for (let i = 0; i < width; i++) {
        const v = x[o + i]!;
        if (v !== 0) {
          this.index[k] = i;
          this.value[k++] = v;
        }
      }
    }
    this.start[rows] = k;
  }
}

/**
 * The first layers of several heads side by side (policy, value and the frozen --init policy all read the same
 * features): one pass over each row's nonzero inputs updates every head's units, a row of 128 or 192 instead of
 * two or three rows of 64. The heads' weights are copied in before each pass (a few percent of its work).
 */
class SharedFirstLayer {
  readonly w: Float32Array;
  readonly b: Float32Array;
  readonly out: Float64Array;
  readonly dz: Float64Array;
  readonly dw: Float64Array;
  readonly db: Float64Array;
  private cols = 0;
  private packedVersion: number | undefined;

  constructor(
    readonly rows: number,
    readonly featureSize: number,
    readonly units: number,
    maxHeads: number,
  ) {
    this.w = new Float32Array(featureSize * units * maxHeads);
    this.b = new Float32Array(units * maxHeads);
    this.out = new Float64Array(rows * units * maxHeads);
    this.dz = new Float64Array(rows * units * maxHeads);
    this.dw = new Float64Array(featureSize * units * maxHeads);
    this.db = new Float64Array(units * maxHeads);
  }

  /**
   * tanh(x · W + b) of each head's first layer into `hidden[h]` (x.rows × units, at most the rows it was made
   * for). The weights are copied in unless `version` says they are those of the last pass.
   */
  forward(x: SparseRows, layers: Dense[], hidden: Float64Array[], version?: number): void {
    const { units, w, b, out } = this;
    const rows = x.rows;
    if (rows > this.rows) throw new Error(`${rows} rows for a first layer made for ${this.rows}`);
    const cols = (this.cols = units * layers.length);
    if (version === undefined || version !== this.packedVersion) this.pack(layers);
    this.packedVersion = version;
    const { start, index, value } = x;
    for (let m = 0; m < rows; m++) {
      const o = m * cols;
      for (let j = 0; j < cols; j++) out[o + j] = b[j]!;
      for (let k = start[m]!, end = start[m + 1]!; k < end; k++) {
        const v = value[k]!,
          wo = index[k]! * cols;
        let j = 0;
        for (; j + 4 <= cols; j += 4) {
          out[o + j]! += v * w[wo + j]!;
          out[o + j + 1]! += v * w[wo + j + 1]!;
          out[o + j + 2]! += v * w[wo + j + 2]!;
          out[o + j + 3]! += v * w[wo + j + 3]!;
        }
        for (; j < cols; j++) out[o + j]! += v * w[wo + j]!;
      }
      for (let h = 0; h < hidden.length; h++) {
        const hid = hidden[h]!,
          ho = m * units,
          src = o + h * units;
        for (let j = 0; j < units; j++) hid[ho + j] = Math.tanh(out[src + j]!);
      }
    }
  }

  private pack(layers: Dense[]): void {
    const { featureSize, units, w, b, cols } = this;
    layers.forEach((l, h) => {
      const lw = l.w;
      for (let i = 0; i < featureSize; i++) {
        const src = i * units,
          dst = i * cols + h * units;
        for (let j = 0; j < units; j++) w[dst + j] = lw[src + j]!;
      }
      b.set(l.b, h * units);
    });
  }

  /** dW += xᵀ·dz and db += Σ dz for each head's first layer, dz[h] its gradient at the pre-activation. */
  backward(x: SparseRows, dz: Float64Array[], grads: { dw: Float64Array; db: Float64Array }[]): void {
    const { featureSize, units, dw, db } = this;
    const rows = x.rows;
    const cols = units * dz.length;
    const g = this.dz;
    dz.forEach((d, h) => {
      for (let m = 0; m < rows; m++) {
        const src = m * units,
          dst = m * cols + h * units;
        for (let j = 0; j < units; j++) g[dst + j] = d[src + j]!;
      }
    });
    dw.fill(0, 0, featureSize * cols);
    db.fill(0, 0, cols);
    const { start, index, value } = x;
    for (let m = 0; m < rows; m++) {
      const zo = m * cols;
      for (let j = 0; j < cols; j++) db[j]! += g[zo + j]!;
      for (let k = start[m]!, end = start[m + 1]!; k < end; k++) {
        const v = value[k]!,
          wo = index[k]! * cols;
        let j = 0;
        for (; j + 4 <= cols; j += 4) {
          dw[wo + j]! += v * g[zo + j]!;
          dw[wo + j + 1]! += v * g[zo + j + 1]!;
          dw[wo + j + 2]! += v * g[zo + j + 2]!;
          dw[wo + j + 3]! += v * g[zo + j + 3]!;
        }
        for (; j < cols; j++) dw[wo + j]! += v * g[zo + j]!;
      }
    }
    grads.forEach((t, h) => {
      for (let i = 0; i < featureSize; i++) {
        const src = i * cols + h * units,
          dst = i * units;
        for (let j = 0; j < units; j++) t.dw[dst + j]! += dw[src + j]!;
      }
      for (let j = 0; j < units; j++) t.db[j]! += db[h * units + j]!;
    });
  }
}

/**
 * A later layer: out[m] = h[m] · W + b (tanh'd when hidden), four rows at a time so that each weight read
 * serves four rows (the loops are memory-bound in JavaScript).
 */
function denseForward(h: Float64Array, rows: number, layer: Dense, out: Float64Array, hidden: boolean): void {
  const { w, b, fanIn, fanOut } = layer;
  let m = 0;
  for (; m + 4 <= rows; m += 4) {
    const o0 = m * fanOut,
      o1 = o0 + fanOut,
      o2 = o1 + fanOut,
      o3 = o2 + fanOut;
    const x0 = m * fanIn,
      x1 = x0 + fanIn,
      x2 = x1 + fanIn,
      x3 = x2 + fanIn;
    for (let j = 0; j < fanOut; j++) out[o0 + j] = out[o1 + j] = out[o2 + j] = out[o3 + j] = b[j]!;
    for (let i = 0; i < fanIn; i++) {
      const v0 = h[x0 + i]!,
        v1 = h[x1 + i]!,
        v2 = h[x2 + i]!,
        v3 = h[x3 + i]!,
        wo = i * fanOut;
      for (let j = 0; j < fanOut; j++) {
        const wij = w[wo + j]!;
        out[o0 + j]! += v0 * wij;
        out[o1 + j]! += v1 * wij;
        out[o2 + j]! += v2 * wij;
        out[o3 + j]! += v3 * wij;
      }
    }
  }
  for (; m < rows; m++) {
    const o = m * fanOut,
      xo = m * fanIn;
    for (let j = 0; j < fanOut; j++) out[o + j] = b[j]!;
    for (let i = 0; i < fanIn; i++) {
      const v = h[xo + i]!,
        wo = i * fanOut;
      for (let j = 0; j < fanOut; j++) out[o + j]! += v * w[wo + j]!;
    }
  }
  if (hidden) for (let k = 0; k < rows * fanOut; k++) out[k] = Math.tanh(out[k]!);
}

/**
 * A later layer's backward pass: dW += hᵀ·dz, db += Σ dz, and dh = (dz · Wᵀ) ⊙ (1 − h²), the gradient at the
 * previous layer's pre-activation (h is that layer's tanh output). Four rows at a time, as the forward pass.
 */
function denseBackward(h: Float64Array, rows: number, layer: Dense, dz: Float64Array, dw: Float64Array, db: Float64Array, dh: Float64Array): void {
  const { w, fanIn, fanOut } = layer;
  for (let m = 0; m < rows; m++) {
    const zo = m * fanOut;
    for (let j = 0; j < fanOut; j++) db[j]! += dz[zo + j]!;
  }
  let m = 0;
  for (; m + 4 <= rows; m += 4) {
    const z0 = m * fanOut,
      z1 = z0 + fanOut,
      z2 = z1 + fanOut,
      z3 = z2 + fanOut;
    const x0 = m * fanIn,
      x1 = x0 + fanIn,
      x2 = x1 + fanIn,
      x3 = x2 + fanIn;
    for (let i = 0; i < fanIn; i++) {
      const v0 = h[x0 + i]!,
        v1 = h[x1 + i]!,
        v2 = h[x2 + i]!,
        v3 = h[x3 + i]!,
        wo = i * fanOut;
      let s0 = 0,
        s1 = 0,
        s2 = 0,
        s3 = 0;
      for (let j = 0; j < fanOut; j++) {
        const g0 = dz[z0 + j]!,
          g1 = dz[z1 + j]!,
          g2 = dz[z2 + j]!,
          g3 = dz[z3 + j]!,
          wij = w[wo + j]!;
        dw[wo + j]! += v0 * g0 + v1 * g1 + v2 * g2 + v3 * g3;
        s0 += g0 * wij;
        s1 += g1 * wij;
        s2 += g2 * wij;
        s3 += g3 * wij;
      }
      dh[x0 + i] = s0 * (1 - v0 * v0);
      dh[x1 + i] = s1 * (1 - v1 * v1);
      dh[x2 + i] = s2 * (1 - v2 * v2);
      dh[x3 + i] = s3 * (1 - v3 * v3);
    }
  }
  for (; m < rows; m++) {
    const zo = m * fanOut,
      xo = m * fanIn;
    for (let i = 0; i < fanIn; i++) {
      const v = h[xo + i]!,
        wo = i * fanOut;
      let s = 0;
      for (let j = 0; j < fanOut; j++) {
        const g = dz[zo + j]!;
        dw[wo + j]! += v * g;
        s += g * w[wo + j]!;
      }
      dh[xo + i] = s * (1 - v * v);
    }
  }
}

/** Activations of one head (policy or value) for a batch, kept for the backward pass. */
class HeadWorkspace {
  readonly hidden: Float64Array[];
  readonly out: Float64Array;
  constructor(
    readonly rows: number,
    layers: Dense[],
  ) {
    this.hidden = layers.slice(0, -1).map((l) => new Float64Array(rows * l.fanOut));
    this.out = new Float64Array(rows * layers[layers.length - 1]!.fanOut);
  }
}

/** The layers after the first (whose tanh output is in ws.hidden[0]) of one head. */
function headForwardRest(layers: Dense[], rows: number, ws: HeadWorkspace): void {
  for (let i = 1; i < layers.length; i++) {
    const last = i === layers.length - 1;
    denseForward(ws.hidden[i - 1]!, rows, layers[i]!, last ? ws.out : ws.hidden[i]!, !last);
  }
}

/**
 * Backward through one head's layers after the first, from dOut (the loss gradient at its output) into the
 * gradient arrays of those layers; returns the gradient at the first layer's pre-activation.
 */
function headBackwardRest(layers: Dense[], rows: number, ws: HeadWorkspace, dOut: Float64Array, grads: Float64Array[], scratch: Float64Array[]): Float64Array {
  let dz = dOut;
  for (let i = layers.length - 1; i >= 1; i--) {
    const dh = scratch[i - 1]!;
    denseBackward(ws.hidden[i - 1]!, rows, layers[i]!, dz, grads[2 * i]!, grads[2 * i + 1]!, dh);
    dz = dh;
  }
  return dz;
}

/** Row-wise log-softmax of `logits` (rows × k) into `out`. */
function logSoftmaxRows(logits: Float64Array, rows: number, k: number, out: Float64Array): void {
  for (let m = 0; m < rows; m++) {
    const o = m * k;
    let max = -Infinity;
    for (let a = 0; a < k; a++) max = Math.max(max, logits[o + a]!);
    let sum = 0;
    for (let a = 0; a < k; a++) sum += Math.exp(logits[o + a]! - max);
    const lse = max + Math.log(sum);
    for (let a = 0; a < k; a++) out[o + a] = logits[o + a]! - lse;
  }
}

/** The policy and value MLPs as typed arrays (variable order and shapes as ActorCritic's). */
export class FusedActorCritic implements PolicyNetwork {
  /** Weights and biases in weights.bin order: the policy head's layers, then the value head's. */
  readonly params: Float32Array[];
  readonly shapes: number[][];
  readonly policyLayers: Dense[];
  readonly valueLayers: Dense[];
  /** Bumped whenever the weights change (setWeights, an optimizer step): acting re-reads them only then. */
  version = 0;
  private acting: { policy: HeadWorkspace; value: HeadWorkspace; first: SharedFirstLayer; logp: Float64Array } | null = null;

  constructor(
    readonly config: PolicyConfig,
    rng: Rng,
  ) {
    const sizes = [config.featureSize, ...config.hidden];
    // The same scaled-normal initialisation as ActorCritic, drawn in the same order: one seed, one network.
    const layer = (fanIn: number, fanOut: number, gain: number): Dense => {
      const w = new Float32Array(fanIn * fanOut);
      const scale = gain / Math.sqrt(fanIn);
      for (let i = 0; i < w.length; i++) w[i] = rng.normal() * scale;
      return { w, b: new Float32Array(fanOut), fanIn, fanOut };
    };
    const trunk = () => sizes.slice(1).map((out, i) => layer(sizes[i]!, out, Math.SQRT2));
    const last = sizes[sizes.length - 1]!;
    this.policyLayers = [...trunk(), layer(last, config.numActions, 0.01)];
    this.valueLayers = [...trunk(), layer(last, 1, 1)];
    const all = [...this.policyLayers, ...this.valueLayers];
    this.params = all.flatMap((l) => [l.w, l.b]);
    this.shapes = all.flatMap((l) => [[l.fanIn, l.fanOut], [l.fanOut]]);
  }

  evaluate(features: Float32Array, batch: number): { probs: Float32Array; values: Float32Array } {
    if (!this.acting || this.acting.policy.rows !== batch) {
      this.acting = {
        policy: new HeadWorkspace(batch, this.policyLayers),
        value: new HeadWorkspace(batch, this.valueLayers),
        first: new SharedFirstLayer(batch, this.config.featureSize, this.config.hidden[0]!, 2),
        logp: new Float64Array(batch * this.config.numActions),
      };
    }
    const { policy, value, first, logp } = this.acting;
    first.forward(
      new SparseRows(features, batch, this.config.featureSize),
      [this.policyLayers[0]!, this.valueLayers[0]!],
      [policy.hidden[0]!, value.hidden[0]!],
      this.version,
    );
    headForwardRest(this.policyLayers, batch, policy);
    headForwardRest(this.valueLayers, batch, value);
    logSoftmaxRows(policy.out, batch, this.config.numActions, logp);
    const probs = new Float32Array(logp.length);
    for (let i = 0; i < probs.length; i++) probs[i] = Math.exp(logp[i]!);
    return { probs, values: Float32Array.from(value.out) };
  }

  weights(): Float32Array {
    const out = new Float32Array(this.params.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of this.params) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }

  setWeights(values: Float32Array): void {
    let o = 0;
    for (const p of this.params) {
      if (o + p.length > values.length) throw new Error('checkpoint weights are shorter than the network');
      p.set(values.subarray(o, o + p.length));
      o += p.length;
    }
    if (o !== values.length) throw new Error('checkpoint weights are longer than the network');
    this.version++;
  }

  dispose(): void {}
}

/** Adam as TensorFlow.js computes it (β1 0.9, β2 0.999, ε 1e-7, bias correction β^(t+1) from iteration 0). */
export class FusedAdam {
  iterations = 0;
  readonly params: Float32Array[];
  readonly m: Float32Array[];
  readonly v: Float32Array[];
  constructor(
    readonly net: FusedActorCritic,
    public learningRate: number,
    readonly beta1 = 0.9,
    readonly beta2 = 0.999,
    readonly epsilon = 1e-7,
  ) {
    this.params = net.params;
    this.m = this.params.map((p) => new Float32Array(p.length));
    this.v = this.params.map((p) => new Float32Array(p.length));
  }

  /** One step with gradients `grads` (same order as params) multiplied by `scale`. */
  step(grads: Float64Array[], scale: number): void {
    const { beta1, beta2, epsilon } = this;
    const c1 = 1 - beta1 ** (this.iterations + 1),
      c2 = 1 - beta2 ** (this.iterations + 1);
    this.params.forEach((p, k) => {
      const g = grads[k]!,
        m = this.m[k]!,
        v = this.v[k]!;
      for (let i = 0; i < p.length; i++) {
        const gi = g[i]! * scale;
        const mi = (m[i] = beta1 * m[i]! + (1 - beta1) * gi);
        const vi = (v[i] = beta2 * v[i]! + (1 - beta2) * gi * gi);
        p[i] = p[i]! - this.learningRate * (mi / c1 / (Math.sqrt(vi / c2) + epsilon));
      }
    });
    this.iterations++;
    this.net.version++;
  }
}

/** Scratch space of one PPO minibatch size. */
class LossWorkspace {
  readonly policy: HeadWorkspace;
  readonly value: HeadWorkspace;
  readonly first: SharedFirstLayer;
  readonly logp: Float64Array;
  readonly dLogits: Float64Array;
  readonly dValue: Float64Array;
  readonly policyScratch: Float64Array[];
  readonly valueScratch: Float64Array[];
  readonly grads: Float64Array[];

  constructor(
    readonly rows: number,
    net: FusedActorCritic,
  ) {
    const k = net.config.numActions;
    this.policy = new HeadWorkspace(rows, net.policyLayers);
    this.value = new HeadWorkspace(rows, net.valueLayers);
    this.first = new SharedFirstLayer(rows, net.config.featureSize, net.config.hidden[0]!, 2);
    this.logp = new Float64Array(rows * k);
    this.dLogits = new Float64Array(rows * k);
    this.dValue = new Float64Array(rows);
    this.policyScratch = net.policyLayers.slice(0, -1).map((l) => new Float64Array(rows * l.fanOut));
    this.valueScratch = net.valueLayers.slice(0, -1).map((l) => new Float64Array(rows * l.fanOut));
    this.grads = net.params.map((p) => new Float64Array(p.length));
  }
}

export interface LossOptions {
  hp: PpoHyperparameters;
  /**
   * The frozen initial policy of an `--init` run (adds klCoef · KL(π ‖ π_init)) as its log-probabilities of every
   * row of the rollout (initPolicyLogProbs): they depend only on the rollout, so they are computed once per update.
   */
  initLogp: Float64Array | null;
  /** Weight of the policy terms (0 while only the value function trains). */
  policyWeight: number;
}

/** Per-minibatch loss terms; `approxKl` and `clipFraction` are against the policy that collected the data. */
export interface LossTerms {
  policyLoss: number;
  valueLoss: number;
  entropy: number;
  kl: number;
  approxKl: number;
  clipFraction: number;
}

/**
 * The PPO loss of ppo.ts's ppoUpdate on one minibatch and its gradient (into ws.grads, params' order):
 * valueCoef · mean (v − R)² + w · (−mean min(ρA, clip(ρ)A) − entropyCoef · H + klCoef · KL(π ‖ π_init)).
 */
export function ppoLossAndGradient(net: FusedActorCritic, mb: Minibatch, opts: LossOptions, ws: LossWorkspace, profile?: PhaseProfile): LossTerms {
  const { hp, initLogp, policyWeight } = opts;
  const rows = mb.size,
    k = net.config.numActions;
  const { logp, dLogits, dValue } = ws;
  const x = measured(profile, 'PPO forward', () => {
    const x = new SparseRows(mb.x, rows, net.config.featureSize);
    ws.first.forward(x, [net.policyLayers[0]!, net.valueLayers[0]!], [ws.policy.hidden[0]!, ws.value.hidden[0]!]);
    headForwardRest(net.policyLayers, rows, ws.policy);
    headForwardRest(net.valueLayers, rows, ws.value);
    logSoftmaxRows(ws.policy.out, rows, k, logp);
    return x;
  });
  let policyLoss = 0,
    valueLoss = 0,
    entropy = 0,
    kl = 0,
    approxKl = 0,
    clipped = 0;
  const inv = 1 / rows;
  for (let m = 0; m < rows; m++) {
    const o = m * k,
      a = mb.actions[m]!,
      io = mb.rows[m]! * k;
    let h = 0,
      klRow = 0;
    for (let j = 0; j < k; j++) {
      const l = logp[o + j]!,
        p = Math.exp(l);
      h -= p * l;
      if (initLogp) klRow += p * (l - initLogp[io + j]!);
    }
    const logRatio = logp[o + a]! - mb.oldLogp[m]!;
    const ratio = Math.exp(logRatio),
      adv = mb.advantages[m]!;
    const clippedRatio = Math.min(Math.max(ratio, 1 - hp.clip), 1 + hp.clip);
    policyLoss -= Math.min(ratio * adv, clippedRatio * adv);
    entropy += h;
    kl += initLogp ? klRow : -logRatio;
    approxKl -= logRatio;
    if (Math.abs(ratio - 1) > hp.clip) clipped++;
    // d(−min(ρA, clip(ρ)A))/d log π(a): −ρA where the unclipped term is the smaller (ties included, as
    // TensorFlow.js's minimum gradient), else 0 (the clipped term is flat outside the range).
    const dLogpA = ratio * adv <= clippedRatio * adv ? -ratio * adv : 0;
    for (let j = 0; j < k; j++) {
      const l = logp[o + j]!,
        p = Math.exp(l);
      // ∂(−min)/∂z_j = dLogpA · (1[j = a] − p_j); ∂H/∂z_j = −p_j (l_j + H); ∂KL/∂z_j = p_j (l_j − l⁰_j − KL).
      let g = dLogpA * ((j === a ? 1 : 0) - p) + hp.entropyCoef * p * (l + h);
      if (initLogp) g += hp.klCoef * p * (l - initLogp[io + j]! - klRow);
      dLogits[o + j] = policyWeight * g * inv;
    }
    const diff = ws.value.out[m]! - mb.returns[m]!;
    valueLoss += diff * diff;
    dValue[m] = hp.valueCoef * 2 * diff * inv;
  }
  measured(profile, 'PPO backward', () => {
    for (const g of ws.grads) g.fill(0);
    const np = net.policyLayers.length * 2;
    const dPolicy = headBackwardRest(net.policyLayers, rows, ws.policy, dLogits, ws.grads.slice(0, np), ws.policyScratch);
    const dValueFirst = headBackwardRest(net.valueLayers, rows, ws.value, dValue, ws.grads.slice(np), ws.valueScratch);
    ws.first.backward(
      x,
      [dPolicy, dValueFirst],
      [
        { dw: ws.grads[0]!, db: ws.grads[1]! },
        { dw: ws.grads[np]!, db: ws.grads[np + 1]! },
      ],
    );
  });
  return {
    policyLoss: policyLoss * inv,
    valueLoss: valueLoss * inv,
    entropy: entropy * inv,
    kl: kl * inv,
    approxKl: approxKl * inv,
    clipFraction: clipped * inv,
  };
}

/** Rows per pass of initPolicyLogProbs: its scratch space stays small whatever the rollout's size. */
const INIT_POLICY_CHUNK = 512;
const initPolicyWorkspaces = new WeakMap<FusedActorCritic, { first: SharedFirstLayer; head: HeadWorkspace }>();

/**
 * log π_init(· | x) of every row of a rollout (buffer.length × numEnvs rows × numActions), for the KL term of an
 * `--init` run. Each row's arithmetic is that of a minibatch's forward pass (a row's sums do not depend on the rows
 * beside it), so the KL is the same to the bit as when the frozen policy was evaluated per minibatch.
 */
export function initPolicyLogProbs(initNet: FusedActorCritic, buffer: RolloutBuffer): Float64Array {
  const f = initNet.config.featureSize,
    k = initNet.config.numActions,
    total = buffer.length * buffer.numEnvs;
  let ws = initPolicyWorkspaces.get(initNet);
  if (!ws) {
    ws = { first: new SharedFirstLayer(INIT_POLICY_CHUNK, f, initNet.config.hidden[0]!, 1), head: new HeadWorkspace(INIT_POLICY_CHUNK, initNet.policyLayers) };
    initPolicyWorkspaces.set(initNet, ws);
  }
  const out = new Float64Array(total * k);
  for (let start = 0; start < total; start += INIT_POLICY_CHUNK) {
    const rows = Math.min(INIT_POLICY_CHUNK, total - start);
    const x = new SparseRows(buffer.features.subarray(start * f, (start + rows) * f), rows, f);
    ws.first.forward(x, [initNet.policyLayers[0]!], [ws.head.hidden[0]!], initNet.version);
    headForwardRest(initNet.policyLayers, rows, ws.head);
    logSoftmaxRows(ws.head.out, rows, k, out.subarray(start * k, (start + rows) * k));
  }
  return out;
}

/** A network's workspaces by batch size, reused across minibatches and updates. */
const workspaces = new WeakMap<FusedActorCritic, Map<number, LossWorkspace>>();
export function lossWorkspace(net: FusedActorCritic, rows: number): LossWorkspace {
  let bySize = workspaces.get(net);
  if (!bySize) workspaces.set(net, (bySize = new Map()));
  let ws = bySize.get(rows);
  if (!ws) bySize.set(rows, (ws = new LossWorkspace(rows, net)));
  return ws;
}

/**
 * Behaviour cloning's loss, −mean log π(y | x), and its gradient into ws.grads (the value head's stay 0, as
 * TensorFlow.js leaves variables outside the loss untouched).
 */
export function crossEntropyAndGradient(net: FusedActorCritic, x: Float32Array, labels: Int32Array, ws: LossWorkspace): number {
  const rows = ws.rows,
    k = net.config.numActions;
  const sparse = new SparseRows(x, rows, net.config.featureSize);
  ws.first.forward(sparse, [net.policyLayers[0]!], [ws.policy.hidden[0]!]);
  headForwardRest(net.policyLayers, rows, ws.policy);
  logSoftmaxRows(ws.policy.out, rows, k, ws.logp);
  let loss = 0;
  const inv = 1 / rows;
  for (let m = 0; m < rows; m++) {
    const o = m * k,
      y = labels[m]!;
    loss -= ws.logp[o + y]!;
    for (let j = 0; j < k; j++) ws.dLogits[o + j] = (Math.exp(ws.logp[o + j]!) - (j === y ? 1 : 0)) * inv;
  }
  for (const g of ws.grads) g.fill(0);
  const dFirst = headBackwardRest(net.policyLayers, rows, ws.policy, ws.dLogits, ws.grads.slice(0, net.policyLayers.length * 2), ws.policyScratch);
  ws.first.backward(sparse, [dFirst], [{ dw: ws.grads[0]!, db: ws.grads[1]! }]);
  return loss * inv;
}

/** ppo.ts's ppoUpdate on the fused network: the same minibatches (same random stream), loss, clipping and Adam. */
export function fusedPpoUpdate(
  net: FusedActorCritic,
  adam: FusedAdam,
  buffer: RolloutBuffer,
  hp: PpoHyperparameters,
  rng: Rng,
  opts: { initNet: FusedActorCritic | null; valueOnly: boolean; profile?: PhaseProfile },
): UpdateStats {
  const sums = { policyLoss: 0, valueLoss: 0, entropy: 0, kl: 0, approxKl: 0, clipFraction: 0 };
  let count = 0;
  const initLogp = opts.initNet && measured(opts.profile, 'PPO init policy', () => initPolicyLogProbs(opts.initNet!, buffer));
  const lossOptions: LossOptions = { hp, initLogp, policyWeight: opts.valueOnly ? 0 : 1 };
  forEachMinibatch(buffer, hp, rng, (mb) => {
    const ws = lossWorkspace(net, mb.size);
    const terms = ppoLossAndGradient(net, mb, lossOptions, ws, opts.profile);
    measured(opts.profile, 'PPO Adam', () => {
      let sq = 0;
      for (const g of ws.grads) for (let i = 0; i < g.length; i++) sq += g[i]! * g[i]!;
      const scale = Math.min(1, hp.maxGradNorm / (Math.sqrt(sq) + 1e-6));
      adam.step(ws.grads, scale);
    });
    for (const key of Object.keys(sums) as (keyof typeof sums)[]) sums[key] += terms[key];
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
