// The sandbox host: a child process that owns one isolated-vm isolate running one reward file. It is a
// separate process so that nothing the reward does (an allocation that outruns the isolate's heap check,
// a crash in the native addon) can take down the trainer or the editor; the isolate itself is the
// security boundary — its global object has only the JavaScript built-ins, no require/process/timers.
// It speaks protocol.ts's request/reply protocol, as the Python host does.
import ivm from 'isolated-vm';
import {
  type CoverageCounts,
  type HostFailure,
  type HostReply,
  type HostRequest,
  type OpenRequest,
  type PackedStep,
  type RewardLimits,
  SLOW_STEPS_TO_FAIL,
  type StepDetail,
} from './protocol';
import type { ObservationWire, WireField } from '../schema';

/** A name generated code may use as it is (the schema's field and parameter names are such names). */
function plainName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`the observation name ${JSON.stringify(name)} is not a plain identifier`);
  return name;
}

/** Reads field number i into v<i> from data at p, in the layout the encoder writes (index.ts ObservationEncoder). */
function decodeField(f: WireField, i: number): string {
  const value = (at: number) => (f.vector ? `[${Array.from({ length: f.vector }, (_, k) => `data[p + ${at + k}]`).join(', ')}]` : `data[p + ${at}]`);
  if (f.dict) return `const v${i} = {};\n        for (let n = data[p++]; n > 0; n--, p += ${1 + Math.max(1, f.vector)}) v${i}[names[data[p]]] = ${value(1)};`;
  if (f.vector) return `const v${i} = ${value(0)};\n        p += ${f.vector};`;
  return `const v${i} = data[p++];`;
}

/** A copy of a field's value that the reward of a swapped env may change without changing the donor's episode. */
function copyOf(f: WireField, expr: string): string {
  if (f.dict) return f.vector ? `copyVectors(${expr})` : `copyNumbers(${expr})`;
  return f.vector ? `${expr}.slice()` : expr;
}

/**
 * The driver's source for this observation: its decoder, the probes' swaps and the reward's argument lists are
 * generated from the schema's description (observationWire), the rest is written out below.
 */
function driverSource(wire: ObservationWire): string {
  const fieldOf = new Map(wire.fields.map((f) => [plainName(f.name), f]));
  const decode = wire.fields.map(decodeField).join('\n        ');
  const observation = `{ ${wire.fields.map((f, i) => `${f.name}: v${i}`).join(', ')} }`;
  const own = `{ ${wire.fields.map((f) => `${f.name}: o.${f.name}`).join(', ')} }`;
  const swapCases = wire.parameters
    .map(({ name, source }) => {
      const field = 'field' in source ? fieldOf.get(source.field) : undefined;
      if (field) return `case '${plainName(name)}': so.${field.name} = ${copyOf(field, `d.${field.name}`)}; break;`;
      if ('field' in source) throw new Error(`the parameter ${name} takes the field ${source.field}, which the observation does not have`);
      if (source.episode === 'previous')
        return `case '${plainName(name)}': w.state.previous = copyVectors(self ? o.nearest : states[w.donor].callPrevious); break;`;
      if (source.episode === 'history') return `case '${plainName(name)}': w.state.positions = w.positions; break;`;
      return ''; // the reward's own memory is not an input a swap tests
    })
    .join('\n      ');
  const STATE = { previous: 's.previous', history: 's.positions', memory: 's.data' } as const;
  const args = (parameters: ObservationWire['parameters']) =>
    parameters.map(({ source }) => ('field' in source ? `o.${plainName(source.field)}` : STATE[source.episode])).join(', ');
  const all = args(wire.parameters);
  const basic = args(wire.parameters.filter((p) => !p.attackOnly));
  const generated: Record<string, string> = { DECODE: decode, OBSERVATION: observation, OWN: own, SWAP_CASES: swapCases, ALL_ARGS: all, BASIC_ARGS: basic };
  return DRIVER.replace(/\/\*([A-Z_]+)\*\//g, (mark, name: string) => generated[name] ?? mark);
}

// Runs inside the isolate before the reward script, so it captures the built-ins before reward code can
// replace them. Per env it keeps the episode state: previous nearest blocks, the position history and
// GLOBAL_DATA. One `step` call handles every env of a batch and returns one reward each, or a failure.
// The /*…*/ marks are where driverSource puts the code it generates from the observation's description.
const DRIVER = String.raw`(function (loopMarker, errorChars, coverageMarker, statements) {
  'use strict';
  const parse = JSON.parse, stringify = JSON.stringify, isFinite = Number.isFinite, now = Date.now, sign = Math.sign;
  const g = globalThis;
  Object.defineProperty(g, loopMarker, { value: 0, writable: true, enumerable: false, configurable: false });
  // A thrown message or stack can be any size (a reward may throw 100 MB); only the head leaves the isolate.
  const cap = (text) => text.length <= errorChars ? text : text.slice(0, errorChars) + ' … [' + (text.length - errorChars) + ' more characters cut]';
  const moduleExports = {};
  globalThis.exports = moduleExports;
  const states = [];
  const names = [];
  let call = null;
  let entry = 'reward_function';
  // Coverage (probes only): which statements ran in the current call, counted per env when it returns.
  const ran = new Int32Array(statements).fill(-1);
  const touched = [];
  let callNumber = 0, lastStatement = -1, partDense = 0, partSparse = 0;
  const counts = { runs: [], paidRuns: [], paidSum: [] };
  if (statements > 0) {
    Object.defineProperty(g, coverageMarker, {
      value: (k) => {
        if (ran[k] !== callNumber) { ran[k] = callNumber; touched[touched.length] = k; }
        lastStatement = k;
      },
      writable: false, enumerable: false, configurable: false,
    });
  }
  const countCall = (e, r) => {
    if (counts.runs[e] === undefined) {
      counts.runs[e] = new Float64Array(statements);
      counts.paidRuns[e] = new Float64Array(statements);
      counts.paidSum[e] = new Float64Array(statements);
    }
    const runs = counts.runs[e], paidRuns = counts.paidRuns[e], paidSum = counts.paidSum[e];
    for (let i = 0; i < touched.length; i++) {
      const k = touched[i];
      runs[k]++;
      if (r > 0) { paidRuns[k]++; paidSum[k] += r; }
    }
  };
  class BadReturn { constructor(fn, value) { this.fn = fn; this.value = value; } }
  const describe = (v) => {
    if (typeof v === 'number' || v === undefined || v === null || typeof v === 'boolean') return String(v);
    if (typeof v === 'string') return 'the string ' + stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
    if (typeof v === 'bigint') return 'the bigint ' + String(v);
    return 'a value of type ' + (Array.isArray(v) ? 'array' : typeof v);
  };
  const checked = (fn, v) => {
    if (typeof v !== 'number' || !isFinite(v)) throw new BadReturn(fn, v);
    return v;
  };
  const errorText = (err) => {
    try {
      if (err instanceof Error) return cap(cap(String(err.name)) + ': ' + String(err.message));
      return 'threw ' + describe(err);
    } catch (e) { return 'threw an unprintable value'; }
  };
  // The stack's frames, without the message it starts with (which errorText already gives).
  const stackFrames = (err) => {
    try {
      const stack = String(err && err.stack);
      const frames = stack.indexOf('\n    at ');
      return cap(frames < 0 ? stack : stack.slice(frames + 1));
    } catch (x) { return ''; }
  };
  // Probes ("does this input change the result?"): the call's arguments with one parameter taken from the donor
  // env's current call, copied so that the reward cannot change the donor's own episode. The positions history
  // is the donor's positions, one per step, kept by this env.
  const copyVectors = (d) => { const c = {}; for (const k in d) c[k] = d[k].slice(); return c; };
  const copyNumbers = (d) => { const c = {}; for (const k in d) c[k] = d[k]; return c; };
  // A donor that is the env itself means its own episode one step apart: current and previous nearest blocks
  // trade places, the other inputs are the previous call's.
  const swapped = (o, s, e) => {
    const w = s.swap, self = w.donor === e, d = self ? s.prior : states[w.donor].last;
    const so = /*OWN*/;
    w.positions[w.positions.length] = d.position.slice();
    w.state = { previous: s.previous, positions: s.positions, data: s.data };
    switch (w.parameter) {
      /*SWAP_CASES*/
    }
    return so;
  };
  const api = {
    currentEnv: -1,
    currentEntry: 'reward_function',
    bind(kind, attack, sparseWeight, denseWeight) {
      if (kind === 'reward_function') {
        const f = moduleExports.reward_function;
        if (typeof f !== 'function') return 'reward_function is not a function when the file has run';
        call = attack ? (o, s) => f(/*ALL_ARGS*/) : (o, s) => f(/*BASIC_ARGS*/);
      } else {
        const d = moduleExports.dense, sp = moduleExports.sparse;
        if (typeof d !== 'function' || typeof sp !== 'function') return 'dense and sparse must be functions when the file has run';
        call = (o, s) => {
          api.currentEntry = 'dense';
          const dv = checked('dense', d(/*ALL_ARGS*/));
          api.currentEntry = 'sparse';
          const sv = checked('sparse', sp(/*ALL_ARGS*/));
          partDense = dv;
          partSparse = sv;
          return sign(sv) * sparseWeight + sign(dv) * denseWeight;
        };
      }
      entry = kind === 'reward_function' ? 'reward_function' : 'dense';
      return '';
    },
    begin(json) {
      const m = parse(json);
      for (let i = 0; i < m.envs.length; i++) {
        const o = m.obs[i];
        const s = { previous: o.nearest, positions: [o.position], data: {}, last: o, prior: o, callPrevious: o.nearest, swap: undefined };
        states[m.envs[i]] = s;
        // Probes: this env's parameter comes from the donor env's episode (begun before it, in this call or earlier).
        const swap = m.swaps && m.swaps[i];
        if (swap) s.swap = { parameter: swap.parameter, donor: swap.donor, positions: [states[swap.donor].last.position.slice()] };
      }
    },
    // Layout per env, field by field in the schema's order: a number as it is, a vector as its numbers, a dict as
    // its size and then per entry the name's id and the value (e.g. nNearest, (nameId, distance, yaw, pitch)*, …).
    step(newNames, data, count, envs) {
      for (let i = 0; i < newNames.length; i++) names[names.length] = newNames[i];
      // A typed array leaves the isolate, and crosses to the trainer, as one block of bytes.
      const out = new Float64Array(count);
      const detail = statements > 0 ? { last: new Array(count), dense: entry === 'dense' ? new Array(count) : undefined, sparse: entry === 'dense' ? new Array(count) : undefined } : undefined;
      // The slowest call by wall clock; the host decides with the isolate's CPU time whether it was a time-out.
      const slowest = { ms: -1, env: -1, entry: entry, loop: 0 };
      let p = 0;
      for (let k = 0; k < count; k++) {
        const e = envs ? envs[k] : k;
        const s = states[e];
        if (s === undefined) return { kind: 'contract', env: e, message: 'no episode has begun for env ' + e + ' (call beginEpisodes first)' };
        /*DECODE*/
        const o = /*OBSERVATION*/;
        s.positions[s.positions.length] = o.position;
        s.prior = s.last;
        s.last = o;
        s.callPrevious = s.previous;
        api.currentEnv = e;
        api.currentEntry = entry;
        g[loopMarker] = 0;
        if (detail) { callNumber++; touched.length = 0; lastStatement = -1; }
        const t0 = now();
        let r;
        try {
          r = s.swap ? call(swapped(o, s, e), s.swap.state) : call(o, s);
        } catch (err) {
          if (s.swap) r = NaN; // a swapped input that makes the reward fail changed its result; the replay goes on
          else if (err instanceof BadReturn) return { kind: 'bad-return', env: e, entry: err.fn, statement: statements > 0 ? lastStatement : undefined, message: err.fn + ' must return a finite number, got ' + describe(err.value) };
          else return { kind: 'throw', env: e, message: errorText(err), stack: stackFrames(err) };
        }
        const took = now() - t0;
        if (took > slowest.ms) { slowest.ms = took; slowest.env = e; slowest.entry = api.currentEntry; slowest.loop = g[loopMarker]; }
        if (s.swap && (typeof r !== 'number' || !isFinite(r))) r = NaN;
        else if (typeof r !== 'number' || !isFinite(r)) return { kind: 'bad-return', env: e, entry, statement: statements > 0 ? lastStatement : undefined, message: 'reward must be a finite number, got ' + describe(r) };
        s.previous = o.nearest;
        out[k] = r;
        if (detail) {
          countCall(e, r);
          detail.last[k] = lastStatement;
          if (detail.dense) { detail.dense[k] = partDense; detail.sparse[k] = partSparse; }
        }
      }
      api.currentEnv = -1;
      return { values: out, slowest, detail };
    },
    coverage() {
      const flat = (per) => {
        const all = new Float64Array(per.length * statements);
        for (let e = 0; e < per.length; e++) if (per[e]) all.set(per[e], e * statements);
        return all;
      };
      return { statements, runs: flat(counts.runs), paidRuns: flat(counts.paidRuns), paidSum: flat(counts.paidSum) };
    },
  };
  return api;
})`;

class Sandbox {
  private readonly isolate: ivm.Isolate;
  private readonly api: ivm.Reference<Record<string, unknown>>;
  private readonly stepFn: ivm.Reference<(newNames: string[], data: Float64Array, count: number, envs: number[] | undefined) => unknown>;
  private readonly beginFn: ivm.Reference<(json: string) => void>;
  private readonly context: ivm.Context;
  /** What the sandbox was doing, for the message of a time limit that fires. */
  phase: 'top level' | 'step' | 'begin' = 'top level';
  stepCalls = 0;
  /** Consecutive steps whose slowest call went over the per-call CPU limit. */
  private slowSteps = 0;

  constructor(private readonly req: OpenRequest) {
    const { limits } = req;
    this.isolate = new ivm.Isolate({ memoryLimit: limits.memoryMb });
    const context = (this.context = this.isolate.createContextSync());
    const driver = this.isolate
      .compileScriptSync(driverSource(req.observation), { filename: 'rewardsmith-driver.js' })
      .runSync(context, { reference: true }) as ivm.Reference<(marker: string, chars: number, coverageMarker: string, statements: number) => unknown>;
    this.api = driver.applySync(undefined, [req.loopMarker, limits.errorChars, req.coverageMarker, req.coverage], {
      result: { reference: true },
    }) as ivm.Reference<Record<string, unknown>>;
    this.stepFn = this.api.getSync('step', { reference: true }) as ivm.Reference<
      (newNames: string[], data: Float64Array, count: number, envs: number[] | undefined) => unknown
    >;
    this.beginFn = this.api.getSync('begin', { reference: true }) as ivm.Reference<(json: string) => void>;
  }

  /** Runs the reward file's top level (once, with a limit of its own: tables may be built there) and binds its exports. */
  runFile(): void {
    const { req } = this;
    const script = this.isolate.compileScriptSync(req.js, { filename: req.scriptName });
    this.phase = 'top level';
    script.runSync(this.context, { timeout: req.limits.topLevelMs });
    this.phase = 'begin';
    const bind = this.api.getSync('bind', { reference: true }) as ivm.Reference<(...a: unknown[]) => string>;
    const problem = bind.applySync(undefined, [req.exportsKind, req.attack, req.sparseWeight, req.denseWeight], { timeout: 1000 });
    if (problem) throw Object.assign(new Error(problem), { contract: true });
  }

  begin(json: string): void {
    this.phase = 'begin';
    this.beginFn.applySync(undefined, [json], { timeout: 10_000 });
  }

  /** The wall-clock budget of a step of `count` calls. */
  stepBudgetMs(count: number): number {
    return this.req.limits.callWallMs * Math.max(1, count) + this.req.limits.stepSlackMs;
  }

  step({ newNames, data, count, envs }: PackedStep): { values: Float64Array; detail?: StepDetail } | { failure: HostFailure } {
    // A call that never returns runs into the step's wall-clock budget, loose enough that a loaded
    // machine's scheduling stalls do not end a healthy run.
    this.phase = 'step';
    this.stepCalls = count;
    const { callCpuMs } = this.req.limits;
    const cpuBefore = this.isolate.cpuTime;
    const wallBefore = performance.now();
    const result = this.stepFn.applySync(undefined, [newNames, data, count, envs], {
      arguments: { copy: true },
      timeout: this.stepBudgetMs(count),
      result: { copy: true },
    }) as { values: Float64Array; slowest: { ms: number; env: number; entry: string; loop: number }; detail?: StepDetail } | HostFailure;
    if (!('values' in result)) return { failure: result };
    // A call that returned but took longer than the limit is a time-out only if the isolate really spent
    // that long computing: wall time alone also counts the moments the OS ran something else.
    const { slowest } = result;
    // The isolate's CPU time covers the whole step (every call, unpacking, garbage collection); the slowest call
    // used at least what the rest of the step (at most its wall time) leaves of it.
    const cpuMs = Number(this.isolate.cpuTime - cpuBefore) / 1e6;
    const slowestCpuMs = cpuMs - (performance.now() - wallBefore - slowest.ms);
    // The isolate's CPU clock also counts V8's helper threads (concurrent GC, compilation), so on a loaded
    // machine one step of a healthy reward can read as a slow call. A reward that really computes too long
    // does so on every step: only SLOW_STEPS_TO_FAIL slow steps in a row fail the run. (A call that never
    // returns is cut off by the step's wall-clock budget above, whatever this count.)
    if (slowest.ms > callCpuMs && slowestCpuMs > callCpuMs) this.slowSteps++;
    else this.slowSteps = 0;
    if (this.slowSteps >= SLOW_STEPS_TO_FAIL) {
      const message = `exceeded ${callCpuMs} ms per call in ${SLOW_STEPS_TO_FAIL} steps in a row (the last took ${Math.round(slowest.ms)} ms)`;
      return { failure: { kind: 'timeout', message, env: slowest.env, entry: slowest.entry, loop: slowest.loop || undefined, fatal: true } };
    }
    return { values: result.values, detail: result.detail };
  }

  /** The coverage counts so far (instrumented files only). */
  coverage(): CoverageCounts {
    const fn = this.api.getSync('coverage', { reference: true }) as ivm.Reference<() => CoverageCounts>;
    return fn.applySync(undefined, [], { timeout: 10_000, result: { copy: true } }) as CoverageCounts;
  }

  /** Which env, exported function and loop were running when the isolate was cut off (valid after a time-out). */
  whereInterrupted(): { env: number | null; entry: string; loop: number | undefined } {
    let loop: number | undefined;
    try {
      loop = (this.context.global.getSync(this.req.loopMarker) as number) || undefined;
    } catch {
      loop = undefined;
    }
    if (this.phase === 'top level') return { env: null, entry: '', loop };
    try {
      const env = this.api.getSync('currentEnv') as unknown as number;
      const entry = this.api.getSync('currentEntry') as unknown as string;
      return { env: env >= 0 ? env : null, entry, loop };
    } catch {
      return { env: null, entry: 'reward_function', loop };
    }
  }

  /** The time limit that fired, in words. */
  limitThatFired(): string {
    const { limits } = this.req;
    if (this.phase === 'top level')
      return `the file's top level did not finish within ${limits.topLevelMs} ms (the limit for code outside the reward functions, run once)`;
    if (this.phase === 'begin') return 'starting the episodes did not finish within 10000 ms';
    const n = this.stepCalls;
    return `a call did not return within the step's ${this.stepBudgetMs(n)} ms (${limits.callWallMs} ms per call × ${n} call${n === 1 ? '' : 's'} + ${limits.stepSlackMs} ms)`;
  }

  get disposed(): boolean {
    return this.isolate.isDisposed;
  }

  dispose(): void {
    if (!this.isolate.isDisposed) this.isolate.dispose();
  }
}

/** Text from outside the isolate's own cut (a top-level throw copied out whole), cut to the same size. */
function capped(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars)} … [${text.length - chars} more characters cut]`;
}

function failureOf(err: unknown, sandbox: Sandbox | null, limits: RewardLimits): HostFailure {
  const e = err as { message?: string; stack?: string; contract?: boolean };
  const message = capped(String(e?.message ?? err), limits.errorChars);
  if (e?.contract) return { kind: 'contract', message, env: null };
  if (/memory limit/i.test(message) || sandbox?.disposed) {
    return { kind: 'memory', message: `exceeded ${limits.memoryMb} MB heap`, env: null, fatal: true };
  }
  if (/timed out/i.test(message)) {
    const where = sandbox?.whereInterrupted() ?? { env: null, entry: '', loop: undefined };
    const what = sandbox?.limitThatFired() ?? 'timed out';
    return { kind: 'timeout', message: what, env: where.env, entry: where.entry || undefined, loop: where.loop, fatal: true };
  }
  // An error the reward script threw at its top level (isolated-vm copies it with the isolate's stack).
  const name = (err as { name?: unknown })?.name;
  const stack = String(e?.stack ?? '');
  const frames = stack.indexOf('\n    at ');
  return {
    kind: 'throw',
    message: typeof name === 'string' && name !== 'Error' ? capped(`${name}: ${message}`, limits.errorChars) : message,
    env: null,
    stack: capped(frames < 0 ? stack : stack.slice(frames + 1), limits.errorChars),
  };
}

function serve(): void {
  let sandbox: Sandbox | null = null;
  let limits: RewardLimits | null = null;
  const reply = (r: HostReply) => process.send!(r);
  process.on('message', (msg: HostRequest) => {
    try {
      if (msg.op === 'open') {
        limits = msg.limits;
        sandbox?.dispose();
        sandbox = null;
        sandbox = new Sandbox(msg);
        sandbox.runFile();
        reply({ id: msg.id, ok: true });
      } else if (msg.op === 'dispose') {
        sandbox?.dispose();
        sandbox = null;
        reply({ id: msg.id, ok: true });
      } else if (!sandbox || sandbox.disposed) {
        reply({ id: msg.id, ok: false, failure: { kind: 'memory', message: `exceeded ${limits?.memoryMb} MB heap`, env: null, fatal: true } });
      } else if (msg.op === 'begin') {
        sandbox.begin(msg.json);
        reply({ id: msg.id, ok: true });
      } else if (msg.op === 'coverage') {
        reply({ id: msg.id, ok: true, coverage: sandbox.coverage() });
      } else if (msg.op === 'step') {
        const r = sandbox.step(msg);
        if ('values' in r) reply({ id: msg.id, ok: true, values: r.values, detail: r.detail });
        else reply({ id: msg.id, ok: false, failure: r.failure });
      } else {
        reply({ id: msg.id, ok: false, failure: { kind: 'contract', message: `the TypeScript sandbox does not run ${msg.op}`, env: null, fatal: true } });
      }
    } catch (err) {
      reply({ id: msg.id, ok: false, failure: failureOf(err, sandbox, limits!) });
    }
  });
  // The parent going away ends the host.
  process.on('disconnect', () => process.exit(0));
}

if (process.send) serve();
