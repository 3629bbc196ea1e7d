// The fused network's WebAssembly kernels do the arithmetic of the JavaScript loops they replaced, to the bit: each
// output element summed in the same order, in float64, multiply then add. A kernel that summed in another order
// (or lost a column at a block's edge) would change what a seed learns; here each one is compared bit for bit with
// those loops on shapes that exercise every block width (16-column blocks, pairs, an odd last column) and row group.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Arena, at } from '../src/ppo/kernels';
import { Rng } from '../src/ppo/policy';

const SHAPES = [
  { rows: 9, inner: 17, cols: 33 },
  { rows: 4, inner: 64, cols: 64 },
  { rows: 7, inner: 64, cols: 14 },
  { rows: 6, inner: 5, cols: 1 },
  { rows: 1, inner: 3, cols: 2 },
];

const rng = new Rng(12);
/** Values of mixed magnitudes and signs, rounded to float32 as weights and features are. */
const fill = (a: Float64Array) => {
  for (let i = 0; i < a.length; i++) a[i] = Math.fround(rng.normal() * 10 ** Math.floor(rng.next() * 6 - 3));
  return a;
};
const sameBits = (actual: Float64Array, expected: Float64Array, what: string) => {
  const a = new BigUint64Array(actual.buffer, actual.byteOffset, actual.length),
    e = new BigUint64Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < e.length; i++) assert.equal(a[i], e[i], `${what}: element ${i} is ${actual[i]}, the loop gives ${expected[i]}`);
};

/** Sparse rows (CSR) of a rows × width matrix with about a third nonzero and one empty row. */
function sparse(rows: number, width: number) {
  const dense = new Float64Array(rows * width);
  for (let m = 1; m < rows; m++) for (let i = 0; i < width; i++) if (rng.next() < 0.3) dense[m * width + i] = Math.fround(rng.normal());
  const start: number[] = [],
    index: number[] = [],
    value: number[] = [];
  for (let m = 0; m < rows; m++) {
    start.push(index.length);
    for (let i = 0; i < width; i++) if (dense[m * width + i] !== 0) index.push(i), value.push(dense[m * width + i]!);
  }
  start.push(index.length);
  return { start, index, value };
}

for (const { rows, inner, cols } of SHAPES) {
  test(`kernels on ${rows} rows, ${inner} → ${cols}: the same bits as the JavaScript loops`, () => {
    const s = sparse(rows, inner);
    const v = Arena.build((arena) => ({
      k: arena.kernels,
      a: arena.f64(rows * inner),
      b: arena.f64(inner * cols),
      bias: arena.f64(cols),
      out: arena.f64(rows * cols),
      dz: arena.f64(rows * cols),
      dw: arena.f64(inner * cols),
      db: arena.f64(cols),
      start: arena.i32(rows + 1),
      index: arena.i32(s.index.length),
      value: arena.f64(s.value.length),
    }));
    [v.a, v.b, v.bias, v.dz, v.dw, v.db].forEach(fill);
    v.start.set(s.start);
    v.index.set(s.index);
    v.value.set(s.value);
    const dw0 = v.dw.slice(),
      db0 = v.db.slice();

    // out = bias + a · B, each element's terms in input order.
    v.k.dense_matmul(at(v.a), rows, inner, at(v.b), cols, at(v.bias), at(v.out));
    const out = new Float64Array(rows * cols);
    for (let m = 0; m < rows; m++)
      for (let j = 0; j < cols; j++) {
        let acc = v.bias[j]!;
        for (let i = 0; i < inner; i++) acc += v.a[m * inner + i]! * v.b[i * cols + j]!;
        out[m * cols + j] = acc;
      }
    sameBits(v.out, out, 'dense_matmul');

    // The same over sparse rows: each row's nonzero inputs in order.
    v.k.sparse_matmul(at(v.start), at(v.index), at(v.value), rows, at(v.b), cols, at(v.bias), at(v.out));
    for (let m = 0; m < rows; m++)
      for (let j = 0; j < cols; j++) {
        let acc = v.bias[j]!;
        for (let k = s.start[m]!; k < s.start[m + 1]!; k++) acc += s.value[k]! * v.b[s.index[k]! * cols + j]!;
        out[m * cols + j] = acc;
      }
    sameBits(v.out, out, 'sparse_matmul');

    // dW += aᵀ · dz, four rows' terms summed before they are added; db += Σ dz.
    v.k.dense_gradient(at(v.a), rows, inner, at(v.dz), cols, at(v.dw), at(v.db));
    const dw = dw0.slice(),
      db = db0.slice();
    for (let m = 0; m < rows; m++) for (let j = 0; j < cols; j++) db[j]! += v.dz[m * cols + j]!;
    let m = 0;
    for (; m + 4 <= rows; m += 4)
      for (let i = 0; i < inner; i++)
        for (let j = 0; j < cols; j++) {
          const t = (r: number) => v.a[(m + r) * inner + i]! * v.dz[(m + r) * cols + j]!;
          dw[i * cols + j]! += t(0) + t(1) + t(2) + t(3);
        }
    for (; m < rows; m++) for (let i = 0; i < inner; i++) for (let j = 0; j < cols; j++) dw[i * cols + j]! += v.a[m * inner + i]! * v.dz[m * cols + j]!;
    sameBits(v.dw, dw, 'dense_gradient dW');
    sameBits(v.db, db, 'dense_gradient db');

    // The first layer's gradients over sparse rows, row by row.
    v.dw.set(dw0);
    v.db.set(db0);
    v.k.sparse_gradient(at(v.start), at(v.index), at(v.value), rows, at(v.dz), cols, at(v.dw), at(v.db));
    dw.set(dw0);
    db.set(db0);
    for (let m = 0; m < rows; m++) {
      for (let j = 0; j < cols; j++) db[j]! += v.dz[m * cols + j]!;
      for (let k = s.start[m]!; k < s.start[m + 1]!; k++) for (let j = 0; j < cols; j++) dw[s.index[k]! * cols + j]! += s.value[k]! * v.dz[m * cols + j]!;
    }
    sameBits(v.dw, dw, 'sparse_gradient dW');
    sameBits(v.db, db, 'sparse_gradient db');

    // Through tanh: dh · (1 − h²).
    const h = v.a.subarray(0, rows * cols > v.a.length ? v.a.length : rows * cols);
    const dh = v.out.subarray(0, h.length);
    const expected = dh.map((g, k) => g * (1 - h[k]! * h[k]!));
    v.k.tanh_gradient(at(dh), at(h), h.length);
    sameBits(dh, expected, 'tanh_gradient');
  });
}

test('the adam kernel: the same float32 weights and moments as the JavaScript formula', () => {
  const n = 1001; // odd: the last element goes through the one-lane tail
  const v = Arena.build((arena) => ({ k: arena.kernels, p: arena.f32(n), m: arena.f32(n), v: arena.f32(n), g: arena.f64(n) }));
  const fill32 = (a: Float32Array, positive: boolean) => {
    for (let i = 0; i < a.length; i++) a[i] = (positive ? Math.abs(rng.normal()) : rng.normal()) * 10 ** Math.floor(rng.next() * 6 - 5);
  };
  fill32(v.p, false);
  fill32(v.m, false);
  fill32(v.v, true);
  fill(v.g);
  const [p, m, s] = [Float32Array.from(v.p), Float32Array.from(v.m), Float32Array.from(v.v)];
  const [scale, beta1, beta2, epsilon, lr, t] = [0.37, 0.9, 0.999, 1e-7, 1e-3, 5];
  const c1 = 1 - beta1 ** t,
    c2 = 1 - beta2 ** t;
  v.k.adam(at(v.p), at(v.m), at(v.v), at(v.g), n, scale, beta1, 1 - beta1, beta2, 1 - beta2, c1, c2, epsilon, lr);
  for (let i = 0; i < n; i++) {
    const gi = v.g[i]! * scale;
    const mi = (m[i] = beta1 * m[i]! + (1 - beta1) * gi);
    const vi = (s[i] = beta2 * s[i]! + (1 - beta2) * gi * gi);
    p[i] = p[i]! - lr * (mi / c1 / (Math.sqrt(vi / c2) + epsilon));
  }
  for (const [ours, loop, what] of [
    [v.p, p, 'weights'],
    [v.m, m, 'first moments'],
    [v.v, s, 'second moments'],
  ] as const)
    assert.deepEqual(new Uint32Array(ours.buffer, ours.byteOffset, n), new Uint32Array(loop.buffer, loop.byteOffset, n), what);
});
