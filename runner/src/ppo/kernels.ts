// The fused network's inner loops as WebAssembly SIMD (f64x2), assembled here from a few opcodes: no toolchain, no
// generated file. Each kernel keeps the JavaScript loops' arithmetic exactly: every output element is summed in
// the same order (the two lanes are two output columns, never two terms of one sum), in float64, with a separate
// multiply and add (wasm has no fused multiply-add), so the results are bit-identical to the loops they replace.
// What they save is JavaScript's per-element cost (bounds checks, float32 → float64 loads, no vectors) and the
// loads and stores of partial sums: a block of 16 output columns stays in registers over a row's whole sum.
// Every array a kernel reads or writes lives in one WebAssembly.Memory (an Arena), views of which the JavaScript
// side reads and writes as ordinary typed arrays; pointers are byte offsets into it.

type Bytes = number[];

const uleb = (n: number): Bytes => {
  const out: Bytes = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const sleb = (n: number): Bytes => {
  const out: Bytes = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) return out.concat(b);
    out.push(b | 0x80);
  }
};
const name = (s: string): Bytes => [...uleb(s.length), ...Buffer.from(s, 'utf8')];
const vec = (items: Bytes[]): Bytes => [...uleb(items.length), ...items.flat()];

const I32 = 0x7f,
  F64 = 0x7c,
  V128 = 0x7b;
const simd = (code: number): Bytes => [0xfd, ...uleb(code)];

// Instructions (memarg: alignment hint log2, then a constant byte offset).
const get = (l: number): Bytes => [0x20, ...uleb(l)];
const set = (l: number): Bytes => [0x21, ...uleb(l)];
const i32 = (n: number): Bytes => [0x41, ...sleb(n)];
const ADD = 0x6a,
  MUL = 0x6c,
  GE_S = 0x4e,
  GT_S = 0x4a;
const i32Load = (offset = 0): Bytes => [0x28, 2, ...uleb(offset)];
/** Column j of the row a sparse entry names, in a row-major float64 matrix: matrix + (index[k] · cols + j) · 8. */
const rowAddress = (matrix: number, index: number, k: number, cols: number, j: number): Bytes => [
  ...get(matrix),
  ...get(index),
  ...get(k),
  ...i32(4),
  MUL,
  ADD,
  ...i32Load(),
  ...get(cols),
  MUL,
  ...get(j),
  ADD,
  ...i32(8),
  MUL,
  ADD,
];
const f64Load = (offset = 0): Bytes => [0x2b, 3, ...uleb(offset)];
const f64Store = (offset = 0): Bytes => [0x39, 3, ...uleb(offset)];
const F64_ADD = 0xa0,
  F64_SUB = 0xa1,
  F64_MUL = 0xa2;
const f64One: Bytes = [0x44, ...new Uint8Array(new Float64Array([1]).buffer)];
const v128Load = (offset = 0): Bytes => [...simd(0x00), 3, ...uleb(offset)];
const v128Store = (offset = 0): Bytes => [...simd(0x0b), 3, ...uleb(offset)];
const load64Splat = (offset = 0): Bytes => [...simd(0x0a), 3, ...uleb(offset)];
const X2_SPLAT = simd(0x14),
  X2_ADD = simd(0xf0),
  X2_SUB = simd(0xf1),
  X2_MUL = simd(0xf2);

/** One lane width's instructions: f64x2 (two columns) or plain f64 (the odd column at the end). */
interface Lanes {
  load: (offset?: number) => Bytes;
  store: (offset?: number) => Bytes;
  splat: (offset?: number) => Bytes;
  add: Bytes;
  sub: Bytes;
  mul: Bytes;
  one: Bytes;
  width: number;
  type: number;
  div: Bytes;
  sqrt: Bytes;
  /** A float32 pair (or one) widened to float64, and the reverse, rounding to nearest as a Float32Array store does. */
  loadF32: Bytes;
  storeF32: Bytes;
  /** The f64 on the stack in every lane. */
  spread: Bytes;
}
const X2: Lanes = {
  load: v128Load,
  store: v128Store,
  splat: load64Splat,
  add: X2_ADD,
  sub: X2_SUB,
  mul: X2_MUL,
  one: [...f64One, ...X2_SPLAT],
  width: 2,
  type: V128,
  div: simd(0xf3),
  sqrt: simd(0xef),
  // v128.load64_zero, f64x2.promote_low_f32x4; f32x4.demote_f64x2_zero, v128.store64_lane (lane 0)
  loadF32: [...simd(0x5d), 3, 0, ...simd(0x5f)],
  storeF32: [...simd(0x5e), ...simd(0x5b), 3, 0, 0],
  spread: X2_SPLAT,
};
const X1: Lanes = {
  load: f64Load,
  store: f64Store,
  splat: f64Load,
  add: [F64_ADD],
  sub: [F64_SUB],
  mul: [F64_MUL],
  one: f64One,
  width: 1,
  type: F64,
  div: [0xa3],
  sqrt: [0x9f],
  // f32.load, f64.promote_f32; f32.demote_f64, f32.store
  loadF32: [0x2a, 2, 0, 0xbb],
  storeF32: [0xb6, 0x38, 2, 0],
  spread: [],
};

/** A function under assembly: its parameters (i32, then f64) and named locals. */
class Fn {
  readonly locals: number[] = [];
  body: Bytes = [];
  private readonly index = new Map<string, number>();
  readonly params: string[];
  constructor(
    readonly name: string,
    i32Params: string[],
    readonly f64Params: string[] = [],
  ) {
    this.params = [...i32Params, ...f64Params];
    this.params.forEach((p, i) => this.index.set(p, i));
  }
  /** The local called `name` (declared on first use with `type`). */
  l(name: string, type = I32): number {
    let i = this.index.get(name);
    if (i === undefined) {
      i = this.params.length + this.locals.length;
      this.locals.push(type);
      this.index.set(name, i);
    }
    return i;
  }
}

/** `local = local + step`. */
const inc = (l: number, step: Bytes): Bytes => [...get(l), ...step, ADD, ...set(l)];
/** `for (init; !exit; next) body`: `exit` leaves an i32 on the stack, nonzero to stop. */
const loop = (init: Bytes, exit: Bytes, next: Bytes, body: Bytes): Bytes => [
  ...init,
  0x02,
  0x40,
  0x03,
  0x40,
  ...exit,
  0x0d,
  1,
  ...body,
  ...next,
  0x0c,
  0,
  0x0b,
  0x0b,
];
/** `for (l = from; l < to; l++)`. */
const count = (l: number, from: Bytes, to: Bytes, body: Bytes): Bytes => loop([...from, ...set(l)], [...get(l), ...to, GE_S], inc(l, i32(1)), body);
/** `p = base + index * scale` with `scale` bytes on the stack after `index`. */
const address = (base: Bytes, index: Bytes): Bytes => [...base, ...index, ADD];
const times = (a: Bytes, b: Bytes): Bytes => [...a, ...b, MUL];

/**
 * Columns j of one output row in blocks: 8 f64x2 accumulators (16 columns) while they fit, then one f64x2,
 * then a plain f64 for an odd last column. For each block: acc = init(j); for each term, acc += v · row(j); store.
 */
function columnBlocks(f: Fn, cols: number, block: (lanes: Lanes, accs: number[], j: number) => Bytes): Bytes {
  const j = f.l('j');
  const out: Bytes = [...i32(0), ...set(j)];
  for (const [lanes, n] of [
    [X2, 8],
    [X2, 1],
    [X1, 1],
  ] as const) {
    const accs = Array.from({ length: n }, (_, a) => f.l(`acc${lanes.width}_${a}`, lanes.type));
    const step = n * lanes.width;
    out.push(...loop([], [...get(j), ...i32(step), ADD, ...get(cols), GT_S], inc(j, i32(step)), block(lanes, accs, j)));
  }
  return out;
}

/** acc_a = load(init + j·8 + 16a) for each accumulator. */
const loadAccs = (lanes: Lanes, accs: number[], base: Bytes): Bytes => accs.flatMap((acc, a) => [...base, ...lanes.load(a * 8 * lanes.width), ...set(acc)]);
const storeAccs = (lanes: Lanes, accs: number[], base: Bytes): Bytes => accs.flatMap((acc, a) => [...base, ...get(acc), ...lanes.store(a * 8 * lanes.width)]);
/** acc_a = acc_a + v · row[16a…]: the term of one input (v) in every accumulator. */
const accumulate = (lanes: Lanes, accs: number[], v: number, row: number): Bytes =>
  accs.flatMap((acc, a) => [...get(acc), ...get(v), ...get(row), ...lanes.load(a * 8 * lanes.width), ...lanes.mul, ...lanes.add, ...set(acc)]);

/**
 * out[m][j] = bias[j] + Σ_i a[m][i] · B[i][j], i ascending (a dense layer: a = its input, B = W [inner × cols]).
 * With bias all zero and B = Wᵀ it is the backward pass's dz · Wᵀ, summed from 0 as the JavaScript loop did.
 */
function denseMatmul(): Fn {
  const f = new Fn('dense_matmul', ['a', 'rows', 'inner', 'b', 'cols', 'bias', 'out']);
  const [a, rows, inner, b, cols, bias, out] = f.params.map((p) => f.l(p));
  const [m, i, aRow, outRow, row, ap, rowStride] = ['m', 'i', 'aRow', 'outRow', 'row', 'ap', 'rowStride'].map((n) => f.l(n));
  const body = columnBlocks(f, cols!, (lanes, accs, j) => {
    const v = f.l(`v${lanes.width}`, lanes.type);
    return [
      ...loadAccs(lanes, accs, address(get(bias!), times(get(j), i32(8)))),
      ...get(aRow),
      ...set(ap),
      ...address(get(b!), times(get(j), i32(8))),
      ...set(row),
      ...count(i, i32(0), get(inner!), [
        ...get(ap),
        ...lanes.splat(),
        ...set(v),
        ...accumulate(lanes, accs, v, row),
        ...inc(ap, i32(8)),
        ...inc(row, get(rowStride)),
      ]),
      ...storeAccs(lanes, accs, address(get(outRow), times(get(j), i32(8)))),
    ];
  });
  f.body = [...times(get(cols!), i32(8)), ...set(rowStride)].concat(
    count(m, i32(0), get(rows!), [
      ...address(get(a!), times(times(get(m), get(inner!)), i32(8))),
      ...set(aRow),
      ...address(get(out!), times(times(get(m), get(cols!)), i32(8))),
      ...set(outRow),
      ...body,
    ]),
  );
  return f;
}

/**
 * out[m][j] = bias[j] + Σ_k value[k] · W[index[k]][j] over row m's nonzero inputs k ∈ [start[m], start[m+1]) in
 * order: a first layer over sparse feature rows.
 */
function sparseMatmul(): Fn {
  const f = new Fn('sparse_matmul', ['start', 'index', 'value', 'rows', 'w', 'cols', 'bias', 'out']);
  const [start, index, value, rows, w, cols, bias, out] = f.params.map((p) => f.l(p));
  const [m, k, k0, kEnd, outRow, row] = ['m', 'k', 'k0', 'kEnd', 'outRow', 'row'].map((n) => f.l(n));
  const body = columnBlocks(f, cols!, (lanes, accs, j) => {
    const v = f.l(`v${lanes.width}`, lanes.type);
    return [
      ...loadAccs(lanes, accs, address(get(bias!), times(get(j), i32(8)))),
      ...count(k, get(k0), get(kEnd), [
        ...address(get(value!), times(get(k), i32(8))),
        ...lanes.splat(),
        ...set(v),
        ...rowAddress(w!, index!, k, cols!, j),
        ...set(row),
        ...accumulate(lanes, accs, v, row),
      ]),
      ...storeAccs(lanes, accs, address(get(outRow), times(get(j), i32(8)))),
    ];
  });
  f.body = count(m, i32(0), get(rows!), [
    ...address(get(start!), times(get(m), i32(4))),
    ...i32Load(0),
    ...set(k0),
    ...address(get(start!), times(get(m), i32(4))),
    ...i32Load(4),
    ...set(kEnd),
    ...address(get(out!), times(times(get(m), get(cols!)), i32(8))),
    ...set(outRow),
    ...body,
  ]);
  return f;
}

/** sum[j] += Σ_m x[m][j], m ascending (a bias gradient). */
function columnSums(f: Fn, x: number, rows: number, cols: number, sum: number): Bytes {
  const [m, xRow, p] = ['cm', 'cxRow', 'cp'].map((n) => f.l(n));
  const j = f.l('cj');
  const part = (lanes: Lanes) =>
    loop([], [...get(j), ...i32(lanes.width), ADD, ...get(cols), GT_S], inc(j, i32(lanes.width)), [
      ...address(get(sum), times(get(j), i32(8))),
      ...set(p),
      ...get(p),
      ...get(p),
      ...lanes.load(),
      ...get(xRow),
      ...get(j),
      ...i32(8),
      MUL,
      ADD,
      ...lanes.load(),
      ...lanes.add,
      ...lanes.store(),
    ]);
  return count(m, i32(0), get(rows), [
    ...address(get(x), times(times(get(m), get(cols)), i32(8))),
    ...set(xRow),
    ...i32(0),
    ...set(j),
    ...part(X2),
    ...part(X1),
  ]);
}

/**
 * A dense layer's weight and bias gradients: db[j] += Σ_m dz[m][j]; dW[i][j] += Σ_m h[m][i] · dz[m][j], the rows
 * four at a time, each four's terms summed first ((h0·g0 + h1·g1) + h2·g2) + h3·g3, then the rest one by one.
 */
function denseGradient(): Fn {
  const f = new Fn('dense_gradient', ['h', 'rows', 'inner', 'dz', 'cols', 'dw', 'db']);
  const [h, rows, inner, dz, cols, dw, db] = f.params.map((p) => f.l(p));
  const [m, i, jb, colBytes, p, hp] = ['m', 'i', 'jb', 'colBytes', 'p', 'hp'].map((n) => f.l(n));
  const z = [0, 1, 2, 3].map((r) => f.l(`z${r}`));
  // For rows m … m+group−1 and input i: dW[i][j] += Σ_r h[m+r][i] · dz[m+r][j] over j (jb = j · 8, in bytes).
  const byJ = (lanes: Lanes, group: number) => {
    const v = Array.from({ length: group }, (_, r) => f.l(`h${lanes.width}_${r}`, lanes.type));
    const splats = v.flatMap((vr, r) => [...get(hp), ...times(get(inner!), i32(8 * r)), ADD, ...lanes.splat(), ...set(vr)]);
    const terms = v.flatMap((vr, r) => [...get(vr), ...get(z[r]!), ...get(jb), ADD, ...lanes.load(), ...lanes.mul, ...(r > 0 ? lanes.add : [])]);
    const step = 8 * lanes.width;
    return {
      splats,
      update: loop([], [...get(jb), ...i32(step), ADD, ...get(colBytes), GT_S], inc(jb, i32(step)), [
        ...get(p),
        ...get(jb),
        ADD,
        ...get(p),
        ...get(jb),
        ADD,
        ...lanes.load(),
        ...terms,
        ...lanes.add,
        ...lanes.store(),
      ]),
    };
  };
  const rowsOf = (group: number): Bytes => {
    const x2 = byJ(X2, group),
      x1 = byJ(X1, group);
    return [
      ...z.slice(0, group).flatMap((zr, r) => [...get(dz!), ...get(m), ...i32(r), ADD, ...get(colBytes), MUL, ADD, ...set(zr)]),
      ...count(i, i32(0), get(inner!), [
        ...address(get(h!), times(address(times(get(m), get(inner!)), get(i)), i32(8))),
        ...set(hp),
        ...address(get(dw!), times(get(i), get(colBytes))),
        ...set(p),
        ...x2.splats,
        ...x1.splats,
        ...i32(0),
        ...set(jb),
        ...x2.update,
        ...x1.update,
      ]),
    ];
  };
  f.body = [
    ...columnSums(f, dz!, rows!, cols!, db!),
    ...times(get(cols!), i32(8)),
    ...set(colBytes),
    ...loop([...i32(0), ...set(m)], [...get(m), ...i32(4), ADD, ...get(rows!), GT_S], inc(m, i32(4)), rowsOf(4)),
    ...loop([], [...get(m), ...get(rows!), GE_S], inc(m, i32(1)), rowsOf(1)),
  ];
  return f;
}

/**
 * A first layer's gradients over sparse rows: for each row m, db[j] += g[m][j], then for each of its nonzero inputs
 * k in order dW[index[k]][j] += value[k] · g[m][j] (g's block of 16 columns held in registers over the inputs).
 */
function sparseGradient(): Fn {
  const f = new Fn('sparse_gradient', ['start', 'index', 'value', 'rows', 'g', 'cols', 'dw', 'db']);
  const [start, index, value, rows, g, cols, dw, db] = f.params.map((p) => f.l(p));
  const [m, k, k0, kEnd, gRow, p] = ['m', 'k', 'k0', 'kEnd', 'gRow', 'p'].map((n) => f.l(n));
  const one = f.l('one');
  const body = columnBlocks(f, cols!, (lanes, accs, j) => {
    const v = f.l(`v${lanes.width}`, lanes.type);
    return [
      ...loadAccs(lanes, accs, address(get(gRow), times(get(j), i32(8)))),
      ...count(k, get(k0), get(kEnd), [
        ...address(get(value!), times(get(k), i32(8))),
        ...lanes.splat(),
        ...set(v),
        ...rowAddress(dw!, index!, k, cols!, j),
        ...set(p),
        ...accs.flatMap((acc, a) => [
          ...get(p),
          ...get(p),
          ...lanes.load(a * 8 * lanes.width),
          ...get(v),
          ...get(acc),
          ...lanes.mul,
          ...lanes.add,
          ...lanes.store(a * 8 * lanes.width),
        ]),
      ]),
    ];
  });
  f.body = count(m, i32(0), get(rows!), [
    ...address(get(start!), times(get(m), i32(4))),
    ...i32Load(0),
    ...set(k0),
    ...address(get(start!), times(get(m), i32(4))),
    ...i32Load(4),
    ...set(kEnd),
    ...address(get(g!), times(times(get(m), get(cols!)), i32(8))),
    ...set(gRow),
    ...i32(1),
    ...set(one),
    ...columnSums(f, gRow, one, cols!, db!),
    ...body,
  ]);
  return f;
}

/** dh[k] = dh[k] · (1 − h[k]²): the gradient through tanh (h its output). */
function tanhGradient(): Fn {
  const f = new Fn('tanh_gradient', ['dh', 'h', 'n']);
  const [dh, h, n] = f.params.map((p) => f.l(p));
  const [k, p, q] = ['k', 'p', 'q'].map((x) => f.l(x));
  const part = (lanes: Lanes) => {
    const x = f.l(`x${lanes.width}`, lanes.type);
    return loop([], [...get(k), ...i32(lanes.width), ADD, ...get(n!), GT_S], inc(k, i32(lanes.width)), [
      ...address(get(dh!), times(get(k), i32(8))),
      ...set(p),
      ...address(get(h!), times(get(k), i32(8))),
      ...set(q),
      ...get(q),
      ...lanes.load(),
      ...set(x),
      ...get(p),
      ...get(p),
      ...lanes.load(),
      ...lanes.one,
      ...get(x),
      ...get(x),
      ...lanes.mul,
      ...lanes.sub,
      ...lanes.mul,
      ...lanes.store(),
    ]);
  };
  f.body = [...i32(0), ...set(k), ...part(X2), ...part(X1)];
  return f;
}

/**
 * Adam on float32 weights and moments as FusedAdam.step did it in JavaScript, in float64 with each result rounded
 * to float32 where it is stored: g = grad · scale; m = β1·m + (1−β1)·g; v = β2·v + ((1−β2)·g)·g;
 * p = p − lr · ((m / c1) / (√(v / c2) + ε)), m and v taken before their rounding.
 */
function adam(): Fn {
  const f = new Fn('adam', ['p', 'm', 'v', 'g', 'n'], ['scale', 'beta1', 'oneMinusBeta1', 'beta2', 'oneMinusBeta2', 'c1', 'c2', 'epsilon', 'lr']);
  const [p, m, v, g, n] = ['p', 'm', 'v', 'g', 'n'].map((x) => f.l(x));
  const constants = f.f64Params;
  const k = f.l('k'),
    at32 = f.l('at32'),
    at64 = f.l('at64');
  const part = (lanes: Lanes) => {
    const c = Object.fromEntries(constants.map((name) => [name, lanes.width === 1 ? f.l(name) : f.l(`${name}2`, V128)]));
    const [gi, mi, vi] = ['gi', 'mi', 'vi'].map((x) => f.l(`${x}${lanes.width}`, lanes.type));
    const spread = lanes.width === 1 ? [] : constants.flatMap((name) => [...get(f.l(name)), ...lanes.spread, ...set(c[name]!)]);
    const ptr = (base: number, wide: boolean): Bytes => [...get(base), ...get(wide ? at64 : at32), ADD];
    /** moment = beta · moment + oneMinusBeta · (term applied), kept in `out` and stored back as float32. */
    const movingAverage = (moment: number, beta: number, oneMinusBeta: number, term: Bytes, out: number): Bytes => [
      ...get(beta),
      ...ptr(moment, false),
      ...lanes.loadF32,
      ...lanes.mul,
      ...get(oneMinusBeta),
      ...term,
      ...lanes.add,
      ...set(out),
      ...ptr(moment, false),
      ...get(out),
      ...lanes.storeF32,
    ];
    return [
      ...spread,
      ...loop([], [...get(k), ...i32(lanes.width), ADD, ...get(n!), GT_S], inc(k, i32(lanes.width)), [
        ...times(get(k), i32(4)),
        ...set(at32),
        ...times(get(k), i32(8)),
        ...set(at64),
        ...ptr(g!, true),
        ...lanes.load(),
        ...get(c.scale!),
        ...lanes.mul,
        ...set(gi),
        // m = β1 · m + (1 − β1) · g, and v = β2 · v + (1 − β2) · g · g
        ...movingAverage(m!, c.beta1!, c.oneMinusBeta1!, [...get(gi), ...lanes.mul], mi),
        ...movingAverage(v!, c.beta2!, c.oneMinusBeta2!, [...get(gi), ...lanes.mul, ...get(gi), ...lanes.mul], vi),
        // p
        ...ptr(p!, false),
        ...ptr(p!, false),
        ...lanes.loadF32,
        ...get(c.lr!),
        ...get(mi),
        ...get(c.c1!),
        ...lanes.div,
        ...get(vi),
        ...get(c.c2!),
        ...lanes.div,
        ...lanes.sqrt,
        ...get(c.epsilon!),
        ...lanes.add,
        ...lanes.div,
        ...lanes.mul,
        ...lanes.sub,
        ...lanes.storeF32,
      ]),
    ];
  };
  f.body = [...i32(0), ...set(k), ...part(X2), ...part(X1)];
  return f;
}

/** The module: one imported memory, the kernels exported by name. */
function assemble(fns: Fn[]): Uint8Array<ArrayBuffer> {
  const section = (id: number, content: Bytes): Bytes => [id, ...uleb(content.length), ...content];
  const types = fns.map((fn) => [0x60, ...vec(fn.params.map((p) => [fn.f64Params.includes(p) ? F64 : I32])), 0]);
  const code = fns.map((fn) => {
    const locals = vec(fn.locals.map((t) => [1, t]));
    const body = [...locals, ...fn.body, 0x0b];
    return [...uleb(body.length), ...body];
  });
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(1, vec(types)),
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 0x00]])),
    ...section(3, vec(fns.map((_, i) => uleb(i)))),
    ...section(7, vec(fns.map((fn, i) => [...name(fn.name), 0x00, ...uleb(i)]))),
    ...section(10, vec(code)),
  ]);
}

export interface Kernels {
  dense_matmul(a: number, rows: number, inner: number, b: number, cols: number, bias: number, out: number): void;
  sparse_matmul(start: number, index: number, value: number, rows: number, w: number, cols: number, bias: number, out: number): void;
  dense_gradient(h: number, rows: number, inner: number, dz: number, cols: number, dw: number, db: number): void;
  sparse_gradient(start: number, index: number, value: number, rows: number, g: number, cols: number, dw: number, db: number): void;
  tanh_gradient(dh: number, h: number, n: number): void;
  adam(
    p: number,
    m: number,
    v: number,
    g: number,
    n: number,
    scale: number,
    beta1: number,
    oneMinusBeta1: number,
    beta2: number,
    oneMinusBeta2: number,
    c1: number,
    c2: number,
    epsilon: number,
    lr: number,
  ): void;
}

let compiled: WebAssembly.Module | null = null;
/** The kernels' module, assembled and compiled once per process (a few kilobytes, a millisecond). */
export function kernelModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(assemble([denseMatmul(), sparseMatmul(), denseGradient(), sparseGradient(), tanhGradient(), adam()]));
  return compiled;
}

type View = Float64Array | Float32Array | Int32Array;
const ALIGN = 16;

/**
 * A WebAssembly memory and the kernels bound to it, laid out once: `Arena.build(plan)` runs `plan` once to
 * measure and once to place its arrays, so the memory never grows (growing would detach every view).
 */
export class Arena {
  readonly kernels: Kernels;
  private used = 0;
  private constructor(
    private readonly buffer: ArrayBuffer | null,
    kernels: Kernels | null,
  ) {
    this.kernels = kernels as Kernels;
  }

  static build<T>(plan: (arena: Arena) => T): T {
    const sizing = new Arena(null, null);
    plan(sizing);
    const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(sizing.used / 65536)) });
    const instance = new WebAssembly.Instance(kernelModule(), { env: { memory } });
    return plan(new Arena(memory.buffer, instance.exports as unknown as Kernels));
  }

  private take<V extends View>(make: (buffer: ArrayBuffer, offset: number, length: number) => V, bytesPer: number, length: number): V {
    const offset = this.used;
    this.used = Math.ceil((offset + length * bytesPer) / ALIGN) * ALIGN;
    return this.buffer ? make(this.buffer, offset, length) : (make(new ArrayBuffer(0), 0, 0) as V);
  }
  f64(length: number): Float64Array {
    return this.take((b, o, n) => new Float64Array(b, o, n), 8, length);
  }
  f32(length: number): Float32Array {
    return this.take((b, o, n) => new Float32Array(b, o, n), 4, length);
  }
  i32(length: number): Int32Array {
    return this.take((b, o, n) => new Int32Array(b, o, n), 4, length);
  }
}

/** An array's address for a kernel. */
export const at = (view: View): number => view.byteOffset;
