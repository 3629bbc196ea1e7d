// The actor-critic MLP and its PPO loss on typed arrays: one forward pass over a whole batch, a hand-written
// backward pass (each head's passes in heads.ts) and Adam, no tensors. At this network size (two 64-unit layers per
// head) the cost of TensorFlow.js is per-operation (dispatch, allocation, tiny matmuls), not arithmetic; fused loops
// do the same arithmetic without it, their inner loops as the WebAssembly kernels of kernels.ts (the same bits as
// JavaScript loops). Same initialisation stream, weights.bin layout and Adam as the tfjs path (policy.ts, ppo.ts),
// which stays the reference: runner/test/fused.test.ts checks the gradients against it.
import type { PolicyConfig, PolicyNetwork, Rng } from './policy';
import type { Minibatch, PpoHyperparameters, UpdateStats } from './ppo';
import { forEachMinibatch, type RolloutBuffer } from './ppo';
import { measured, type PhaseProfile } from './profile';
import { Arena, at, type Kernels } from './kernels';
import { type Dense, Head, type RolloutRows, SparseRollout, SparseRows, valueLossAndDelta } from './heads';

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

/**
 * The forward pass of the policy head (and the value head, with 2 heads) for up to `rows` rows: acting, and the
 * frozen --init policy's log-probabilities. Its weight copies are refreshed only when the network's version moved.
 */
class ForwardWorkspace {
  readonly heads: Head[];
  readonly x: SparseRows;
  readonly kernels: Kernels;
  readonly logp: Float64Array;
  private version: number | undefined;
  constructor(
    readonly net: FusedActorCritic,
    readonly rows: number,
    heads: 1 | 2,
  ) {
    const workspace = Arena.build((arena) => ({
      x: new SparseRows(arena, rows, net.config.featureSize),
      heads: [net.policyLayers, net.valueLayers].slice(0, heads).map((layers) => new Head(arena, rows, layers, false)),
      kernels: arena.kernels,
    }));
    this.x = workspace.x;
    this.heads = workspace.heads;
    this.kernels = workspace.kernels;
    this.logp = new Float64Array(rows * net.config.numActions);
  }

  forward(features: Float32Array, rows: number): void {
    if (this.version !== this.net.version) {
      for (const h of this.heads) h.refresh();
      this.version = this.net.version;
    }
    this.x.fill(features, rows);
    for (const h of this.heads) h.forward(this.kernels, this.x);
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
  readonly rowsIndependent = true;
  /** Acting's workspaces: both heads (evaluate), the policy head alone (actionProbs). */
  private acting: ForwardWorkspace | null = null;
  private policyActing: ForwardWorkspace | null = null;

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
    // A workspace serves any batch up to its size (a row's arithmetic does not depend on the others): batches that
    // shrink as episodes end reuse it instead of making a memory each.
    if (!this.acting || this.acting.rows < batch) this.acting = new ForwardWorkspace(this, batch, 2);
    const ws = this.acting;
    return { probs: this.probsOf(ws, features, batch), values: Float32Array.from(ws.heads[1]!.out.subarray(0, batch)) };
  }

  actionProbs(features: Float32Array, batch: number): Float32Array {
    if (!this.policyActing || this.policyActing.rows < batch) this.policyActing = new ForwardWorkspace(this, batch, 1);
    return this.probsOf(this.policyActing, features, batch);
  }

  /** The workspace's forward pass over the rows, and the policy head's probabilities. */
  private probsOf(ws: ForwardWorkspace, features: Float32Array, batch: number): Float32Array {
    ws.forward(features, batch);
    logSoftmaxRows(ws.heads[0]!.out, batch, this.config.numActions, ws.logp);
    const probs = new Float32Array(batch * this.config.numActions);
    for (let i = 0; i < probs.length; i++) probs[i] = Math.exp(ws.logp[i]!);
    return probs;
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

/**
 * Adam as TensorFlow.js computes it (β1 0.9, β2 0.999, ε 1e-7, bias correction β^(t+1) from iteration 0), by the
 * `adam` kernel. Its moments live in the kernel's memory (m and v are views of it); each step copies the weights
 * and gradients in and the weights back out.
 */
export class FusedAdam {
  iterations = 0;
  readonly params: Float32Array[];
  readonly m: Float32Array[];
  readonly v: Float32Array[];
  private readonly state: {
    kernels: Kernels;
    p: Float32Array;
    m: Float32Array;
    v: Float32Array;
    g: Float64Array;
    pParts: Float32Array[];
    gParts: Float64Array[];
    mParts: Float32Array[];
    vParts: Float32Array[];
  };
  constructor(
    readonly net: FusedActorCritic,
    public learningRate: number,
    readonly beta1 = 0.9,
    readonly beta2 = 0.999,
    readonly epsilon = 1e-7,
  ) {
    this.params = net.params;
    const total = this.params.reduce((n, p) => n + p.length, 0);
    this.state = Arena.build((arena) => {
      const [p, m, v] = [arena.f32(total), arena.f32(total), arena.f32(total)];
      const g = arena.f64(total);
      const parts = <T extends Float32Array | Float64Array>(all: T): T[] => {
        let o = 0;
        return this.params.map((q) => all.subarray(o, (o += q.length)) as T);
      };
      return { kernels: arena.kernels, p, m, v, g, pParts: parts(p), gParts: parts(g), mParts: parts(m), vParts: parts(v) };
    });
    this.m = this.state.mParts;
    this.v = this.state.vParts;
  }

  /** One step with gradients `grads` (same order as params) multiplied by `scale`. */
  step(grads: Float64Array[], scale: number): void {
    const { beta1, beta2, epsilon } = this;
    const c1 = 1 - beta1 ** (this.iterations + 1),
      c2 = 1 - beta2 ** (this.iterations + 1);
    const { kernels, p, m, v, g, pParts, gParts } = this.state;
    this.params.forEach((q, k) => {
      pParts[k]!.set(q);
      gParts[k]!.set(grads[k]!);
    });
    kernels.adam(at(p), at(m), at(v), at(g), p.length, scale, beta1, 1 - beta1, beta2, 1 - beta2, c1, c2, epsilon, this.learningRate);
    this.params.forEach((q, k) => q.set(pParts[k]!));
    this.iterations++;
    this.net.version++;
  }
}

/** Scratch space of one PPO minibatch size, in one arena. */
class LossWorkspace {
  readonly policy: Head;
  readonly value: Head;
  readonly x: SparseRows;
  readonly kernels: Kernels;
  readonly logp: Float64Array;
  readonly dLogits: Float64Array;
  readonly dValue: Float64Array;
  readonly grads: Float64Array[];
  /** Zeros, the bias of the backward pass's dz · Wᵀ. */
  readonly zeros: Float64Array;
  constructor(
    readonly rows: number,
    readonly net: FusedActorCritic,
  ) {
    const k = net.config.numActions;
    const parts = Arena.build((arena) => ({
      policy: new Head(arena, rows, net.policyLayers, true),
      value: new Head(arena, rows, net.valueLayers, true),
      x: new SparseRows(arena, rows, net.config.featureSize),
      dLogits: arena.f64(rows * k),
      dValue: arena.f64(rows),
      grads: net.params.map((p) => arena.f64(p.length)),
      zeros: arena.f64(Math.max(...net.config.hidden)),
      kernels: arena.kernels,
    }));
    ({
      policy: this.policy,
      value: this.value,
      x: this.x,
      dLogits: this.dLogits,
      dValue: this.dValue,
      grads: this.grads,
      zeros: this.zeros,
      kernels: this.kernels,
    } = parts);
    this.logp = new Float64Array(rows * k);
  }

  /** The heads' forward passes over the rows in `x` (one head: the policy alone). */
  forward(heads: 1 | 2): void {
    // Always re-read the weights (a few percent of a pass): a caller may have changed them without a version bump.
    this.policy.refresh();
    if (heads === 2) this.value.refresh();
    this.policy.forward(this.kernels, this.x);
    if (heads === 2) this.value.forward(this.kernels, this.x);
  }

  /** The gradients of the loss whose gradients at the outputs are dLogits (and dValue, with 2 heads). */
  backward(heads: 1 | 2): void {
    for (const g of this.grads) g.fill(0);
    const np = this.net.policyLayers.length * 2;
    this.policy.backward(this.kernels, this.x, this.dLogits, this.grads.slice(0, np), this.zeros);
    if (heads === 2) this.value.backward(this.kernels, this.x, this.dValue, this.grads.slice(np), this.zeros);
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
  /** The rollout's rows as sparse rows, gathered by mb.rows (mb.x is then not read); absent: mb.x. */
  rollout?: SparseRollout;
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
export function ppoLossAndGradient(
  net: FusedActorCritic,
  mb: Minibatch,
  opts: LossOptions,
  ws: LossWorkspace,
  profile?: PhaseProfile,
  valueThread?: ValueThreadLike | null,
): LossTerms {
  const { hp, initLogp, policyWeight } = opts;
  const rows = mb.size,
    k = net.config.numActions;
  const { logp, dLogits, dValue } = ws;
  // The value head's share runs on the value thread meanwhile when there is one (it gathers its own rows).
  valueThread?.begin(mb, opts.rollout!, hp.valueCoef);
  const heads = valueThread ? 1 : 2;
  measured(profile, 'PPO forward', () => {
    if (opts.rollout) ws.x.gather(opts.rollout, mb.rows, rows);
    else ws.x.fill(mb.x, rows);
    ws.forward(heads);
    logSoftmaxRows(ws.policy.out, rows, k, logp);
  });
  let policyLoss = 0,
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
  }
  const valueLoss = valueThread ? 0 : valueLossAndDelta(ws.value.out, mb.returns, rows, hp.valueCoef, dValue);
  measured(profile, 'PPO backward', () => ws.backward(heads));
  const terms = {
    policyLoss: policyLoss * inv,
    valueLoss: valueLoss * inv,
    entropy: entropy * inv,
    kl: kl * inv,
    approxKl: approxKl * inv,
    clipFraction: clipped * inv,
  };
  if (valueThread) terms.valueLoss = measured(profile, 'PPO value thread (wait)', () => valueThread.finish(ws.grads.slice(net.policyLayers.length * 2))) * inv;
  return terms;
}

/** What ppoLossAndGradient asks of the value thread (value-thread.ts): start a minibatch's value share, then its result. */
export interface ValueThreadLike {
  begin(mb: Minibatch, rollout: RolloutRows, valueCoef: number): void;
  /** Waits for the share begun last; its gradients into `grads`, in the value head's parameter order; returns Σ (v − R)². */
  finish(grads: Float64Array[]): number;
}

/** Rows per pass of initPolicyLogProbs: its scratch space stays small whatever the rollout's size. */
const INIT_POLICY_CHUNK = 512;
const initPolicyWorkspaces = new WeakMap<FusedActorCritic, ForwardWorkspace>();

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
  if (!ws) initPolicyWorkspaces.set(initNet, (ws = new ForwardWorkspace(initNet, INIT_POLICY_CHUNK, 1)));
  const out = new Float64Array(total * k);
  for (let start = 0; start < total; start += INIT_POLICY_CHUNK) {
    const rows = Math.min(INIT_POLICY_CHUNK, total - start);
    ws.forward(buffer.features.subarray(start * f, (start + rows) * f), rows);
    logSoftmaxRows(ws.heads[0]!.out, rows, k, out.subarray(start * k, (start + rows) * k));
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
  ws.x.fill(x, rows);
  ws.forward(1);
  logSoftmaxRows(ws.policy.out, rows, k, ws.logp);
  let loss = 0;
  const inv = 1 / rows;
  for (let m = 0; m < rows; m++) {
    const o = m * k,
      y = labels[m]!;
    loss -= ws.logp[o + y]!;
    for (let j = 0; j < k; j++) ws.dLogits[o + j] = (Math.exp(ws.logp[o + j]!) - (j === y ? 1 : 0)) * inv;
  }
  ws.backward(1);
  return loss * inv;
}

/**
 * ppo.ts's ppoUpdate on the fused network: the same minibatches (same random stream), loss, clipping and Adam; the
 * value head's share of each minibatch on `valueThread` when given (the same bits).
 */
export function fusedPpoUpdate(
  net: FusedActorCritic,
  adam: FusedAdam,
  buffer: RolloutBuffer,
  hp: PpoHyperparameters,
  rng: Rng,
  opts: { initNet: FusedActorCritic | null; valueOnly: boolean; profile?: PhaseProfile; valueThread?: ValueThreadLike | null },
): UpdateStats {
  const sums = { policyLoss: 0, valueLoss: 0, entropy: 0, kl: 0, approxKl: 0, clipFraction: 0 };
  let count = 0;
  const initLogp = opts.initNet && measured(opts.profile, 'PPO init policy', () => initPolicyLogProbs(opts.initNet!, buffer));
  // The rollout's nonzero features, found once: each minibatch gathers its rows instead of scanning them.
  const rollout = measured(opts.profile, 'PPO sparse rows', () => new SparseRollout(buffer.features, buffer.length * buffer.numEnvs, buffer.featureSize));
  const lossOptions: LossOptions = { hp, initLogp, policyWeight: opts.valueOnly ? 0 : 1, rollout };
  forEachMinibatch(
    buffer,
    hp,
    rng,
    (mb) => {
      const ws = lossWorkspace(net, mb.size);
      const terms = ppoLossAndGradient(net, mb, lossOptions, ws, opts.profile, opts.valueThread);
      measured(opts.profile, 'PPO Adam', () => {
        let sq = 0;
        for (const g of ws.grads) for (let i = 0; i < g.length; i++) sq += g[i]! * g[i]!;
        const scale = Math.min(1, hp.maxGradNorm / (Math.sqrt(sq) + 1e-6));
        adam.step(ws.grads, scale);
      });
      for (const key of Object.keys(sums) as (keyof typeof sums)[]) sums[key] += terms[key];
      count++;
    },
    false,
  );
  return {
    policyLoss: sums.policyLoss / count,
    valueLoss: sums.valueLoss / count,
    entropy: sums.entropy / count,
    kl: sums.kl / count,
    approxKl: sums.approxKl / count,
    clipFraction: sums.clipFraction / count,
  };
}
