// One MLP head (the policy's or the value's) of the fused network on typed arrays: its layers' float64 weight
// copies, the batch's feature rows as their nonzero entries, and the forward and hand-written backward passes
// through the WebAssembly kernels of kernels.ts. fused.ts builds the actor-critic, its PPO loss and Adam on it; the
// value thread (value-worker.ts) runs the value head's share of each minibatch with the same code. Nothing here
// imports TensorFlow.js, so a worker that loads it stays light.
import { Arena, at, type Kernels } from './kernels';

/** One dense layer: `out = in · W + b`, W row-major [fanIn, fanOut] (TensorFlow.js's layout). */
export interface Dense {
  w: Float32Array;
  b: Float32Array;
  fanIn: number;
  fanOut: number;
}

/**
 * A batch of feature rows as its nonzero entries (most features are one-hot or absent: ~89 % zeros on
 * approach-tree), refilled for each batch and read by both heads' first layers, forward and backward.
 */
export class SparseRows {
  readonly start: Int32Array;
  readonly index: Int32Array;
  readonly value: Float64Array;
  rows = 0;
  constructor(
    arena: Arena,
    readonly capacity: number,
    readonly width: number,
  ) {
    this.start = arena.i32(capacity + 1);
    this.index = arena.i32(capacity * width);
    this.value = arena.f64(capacity * width);
  }

  fill(x: Float32Array, rows: number): this {
    if (rows > this.capacity) throw new Error(`${rows} rows for sparse rows made for ${this.capacity}`);
    const { start, index, value, width } = this;
    let k = 0;
    for (let m = 0; m < rows; m++) {
      start[m] = k;
      const o = m * width;
      for (let i = 0; i < width; i++) {
        const v = x[o + i]!;
        if (v !== 0) {
          index[k] = i;
          value[k++] = v;
        }
      }
    }
    start[rows] = k;
    this.rows = rows;
    return this;
  }

  /** Rows `rows[0…count)` of a rollout's sparse rows: the entries fill() would find in the same rows' features. */
  gather(rollout: RolloutRows, rows: Int32Array, count: number): this {
    if (count > this.capacity) throw new Error(`${count} rows for sparse rows made for ${this.capacity}`);
    const { start, index, value } = this;
    let k = 0;
    for (let m = 0; m < count; m++) {
      start[m] = k;
      const r = rows[m]!;
      for (let e = rollout.start[r]!, end = rollout.start[r + 1]!; e < end; e++) {
        index[k] = rollout.index[e]!;
        value[k++] = rollout.value[e]!;
      }
    }
    start[count] = k;
    this.rows = count;
    return this;
  }
}

/** A rollout's feature rows as their nonzero entries: row m's are entries start[m] … start[m + 1] − 1. */
export interface RolloutRows {
  readonly start: Int32Array;
  readonly index: Int32Array;
  readonly value: Float32Array;
}

/** A whole rollout's feature rows as their nonzero entries, built once per update for its minibatches to gather. */
export class SparseRollout implements RolloutRows {
  readonly start: Int32Array;
  readonly index: Int32Array;
  readonly value: Float32Array;
  constructor(features: Float32Array, rows: number, width: number) {
    let nnz = 0;
    for (let i = 0; i < rows * width; i++) if (features[i] !== 0) nnz++;
    this.start = new Int32Array(rows + 1);
    this.index = new Int32Array(nnz);
    this.value = new Float32Array(nnz);
    let k = 0;
    for (let m = 0; m < rows; m++) {
      this.start[m] = k;
      for (let i = 0, o = m * width; i < width; i++)
        if (features[o + i] !== 0) {
          this.index[k] = i;
          this.value[k++] = features[o + i]!;
        }
    }
    this.start[rows] = k;
  }
}

/**
 * One layer's weights as the kernels read them: float64 copies of W (and of Wᵀ for the backward pass) and b, in
 * an arena, refreshed when the network's version moves (the float32 → float64 widening is exact).
 */
class LayerCopy {
  readonly w: Float64Array;
  readonly wT: Float64Array | null;
  readonly b: Float64Array;
  constructor(
    arena: Arena,
    readonly layer: Dense,
    transposed: boolean,
  ) {
    this.w = arena.f64(layer.w.length);
    this.wT = transposed ? arena.f64(layer.w.length) : null;
    this.b = arena.f64(layer.b.length);
  }

  refresh(): void {
    const { w, b, fanIn, fanOut } = this.layer;
    this.w.set(w);
    this.b.set(b);
    const wT = this.wT;
    if (wT) for (let i = 0; i < fanIn; i++) for (let j = 0; j < fanOut; j++) wT[j * fanIn + i] = w[i * fanOut + j]!;
  }
}

const tanhInPlace = (h: Float64Array): void => {
  for (let k = 0; k < h.length; k++) h[k] = Math.tanh(h[k]!);
};

/**
 * One head (policy or value) for a batch of up to `rows` rows: its layers' copies and its activations, kept for
 * the backward pass, all in the workspace's arena.
 */
export class Head {
  readonly copies: LayerCopy[];
  readonly hidden: Float64Array[];
  readonly out: Float64Array;
  /** Gradients at each hidden layer's pre-activation (backward only). */
  readonly scratch: Float64Array[];
  constructor(
    arena: Arena,
    readonly rows: number,
    readonly layers: Dense[],
    backward: boolean,
  ) {
    this.copies = layers.map((l, i) => new LayerCopy(arena, l, backward && i > 0));
    this.hidden = layers.slice(0, -1).map((l) => arena.f64(rows * l.fanOut));
    this.out = arena.f64(rows * layers[layers.length - 1]!.fanOut);
    this.scratch = backward ? layers.slice(0, -1).map((l) => arena.f64(rows * l.fanOut)) : [];
  }

  refresh(): void {
    for (const c of this.copies) c.refresh();
  }

  /** The head's output for the first x.rows rows (tanh after every layer but the last). */
  forward(k: Kernels, x: SparseRows): void {
    const rows = x.rows;
    const first = this.copies[0]!;
    const h0 = this.hidden[0]!.subarray(0, rows * first.layer.fanOut);
    k.sparse_matmul(at(x.start), at(x.index), at(x.value), rows, at(first.w), first.layer.fanOut, at(first.b), at(h0));
    tanhInPlace(h0);
    for (let i = 1; i < this.copies.length; i++) {
      const { layer, w, b } = this.copies[i]!;
      const last = i === this.copies.length - 1;
      const out = (last ? this.out : this.hidden[i]!).subarray(0, rows * layer.fanOut);
      k.dense_matmul(at(this.hidden[i - 1]!), rows, layer.fanIn, at(w), layer.fanOut, at(b), at(out));
      if (!last) tanhInPlace(out);
    }
  }

  /**
   * Backward from dOut (the loss gradient at the output) into `grads` (this head's weights and biases in layer
   * order, zeroed by the caller): dW += hᵀ·dz, db += Σ dz, dh = (dz · Wᵀ) ⊙ (1 − h²) down to the first layer.
   */
  backward(k: Kernels, x: SparseRows, dOut: Float64Array, grads: Float64Array[], zeros: Float64Array): void {
    const rows = x.rows;
    let dz = dOut;
    for (let i = this.copies.length - 1; i >= 1; i--) {
      const { layer, wT } = this.copies[i]!;
      const h = this.hidden[i - 1]!,
        dh = this.scratch[i - 1]!;
      k.dense_gradient(at(h), rows, layer.fanIn, at(dz), layer.fanOut, at(grads[2 * i]!), at(grads[2 * i + 1]!));
      k.dense_matmul(at(dz), rows, layer.fanOut, at(wT!), layer.fanIn, at(zeros), at(dh));
      k.tanh_gradient(at(dh), at(h), rows * layer.fanIn);
      dz = dh;
    }
    k.sparse_gradient(at(x.start), at(x.index), at(x.value), rows, at(dz), this.copies[0]!.layer.fanOut, at(grads[0]!), at(grads[1]!));
  }
}

/** valueCoef · mean (v − R)²'s gradient at each row's value into `dValue`; returns Σ (v − R)² (rows in order). */
export function valueLossAndDelta(values: Float64Array, returns: Float32Array, rows: number, valueCoef: number, dValue: Float64Array): number {
  const inv = 1 / rows;
  let sum = 0;
  for (let m = 0; m < rows; m++) {
    const diff = values[m]! - returns[m]!;
    sum += diff * diff;
    dValue[m] = valueCoef * 2 * diff * inv;
  }
  return sum;
}

/**
 * The value head's share of a PPO minibatch on its own (the value thread's, value-thread.ts): the rows gathered
 * from the rollout, the forward pass, (v − R)² and the backward pass into `grads` (the head's weights and biases in
 * layer order). The same kernels on the same inputs as fused.ts's LossWorkspace on one thread, so the same bits.
 */
export class ValueHeadPass {
  private readonly head: Head;
  private readonly x: SparseRows;
  private readonly kernels: Kernels;
  private readonly dValue: Float64Array;
  private readonly zeros: Float64Array;
  readonly grads: Float64Array[];
  constructor(layers: Dense[], featureSize: number, rows: number) {
    const parts = Arena.build((arena) => ({
      head: new Head(arena, rows, layers, true),
      x: new SparseRows(arena, rows, featureSize),
      dValue: arena.f64(rows),
      zeros: arena.f64(Math.max(...layers.map((l) => l.fanOut))),
      grads: layers.flatMap((l) => [arena.f64(l.w.length), arena.f64(l.b.length)]),
      kernels: arena.kernels,
    }));
    ({ head: this.head, x: this.x, dValue: this.dValue, zeros: this.zeros, grads: this.grads, kernels: this.kernels } = parts);
  }

  /** Σ (v − R)² over the minibatch's rows `rows[0…count)`; the gradient of valueCoef · mean (v − R)² into `grads`. */
  run(rollout: RolloutRows, rows: Int32Array, returns: Float32Array, count: number, valueCoef: number): number {
    this.x.gather(rollout, rows, count);
    this.head.refresh();
    this.head.forward(this.kernels, this.x);
    const sum = valueLossAndDelta(this.head.out, returns, count, valueCoef, this.dValue);
    for (const g of this.grads) g.fill(0);
    this.head.backward(this.kernels, this.x, this.dValue, this.grads, this.zeros);
    return sum;
  }
}
