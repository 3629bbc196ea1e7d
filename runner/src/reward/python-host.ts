// The Python sandbox host: a child process that runs one Python reward file in Pyodide (CPython compiled to
// WebAssembly, from its npm package; nothing is downloaded). It speaks sandbox-host.ts's protocol, so the
// parent (index.ts) treats both languages alike. The limits, as the TypeScript host keeps them:
// - time: a watchdog thread shares an interrupt buffer with the interpreter; when a call outlives its budget
//   it raises KeyboardInterrupt in the reward, whose traceback names the line that was running (the loop);
// - memory: WebAssembly.Memory growth beyond the limit is refused, so an allocation fails with MemoryError at
//   its line (and the host's own JavaScript heap is bounded by --max-old-space-size);
// - reach: the reward runs with restricted builtins, a refused-attribute check, an audit hook and without the
//   JavaScript bridge (python-driver.ts says which wall stops which attack); `js` is an empty object anyway.
// The parent kills this process on any fatal failure and when it stops answering.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { cacheDir, writeAtomic } from '../files';
import { PYTHON_BUILTINS, pythonDriver } from './python-driver';
import type { CoverageCounts, HostFailure, HostReply, HostRequest, PackedStep, PythonOpenRequest, RewardLimits, StatementSpan, StepDetail } from './protocol';
import { SLOW_STEPS_TO_FAIL } from './protocol';

// --- memory: refuse WebAssembly memory growth past the cap (set once Pyodide has loaded) ----------------
let memoryCapBytes = Number.POSITIVE_INFINITY;
let growthRefused = false;
const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function (this: WebAssembly.Memory, delta: number): number {
  if (this.buffer.byteLength + delta * 65536 > memoryCapBytes) {
    growthRefused = true;
    throw new RangeError('the reward sandbox memory limit');
  }
  return grow.call(this, delta);
};

// --- time: the watchdog thread -----------------------------------------------------------------------
// control[0]: a sequence number, odd while a guarded call runs; control[1]: its budget in ms; control[2]: 1
// once the budget ran out. interrupt[0] = 2 (SIGINT) makes the interpreter raise KeyboardInterrupt.
const control = new Int32Array(new SharedArrayBuffer(12));
const interrupt = new Int32Array(new SharedArrayBuffer(4));
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const control = new Int32Array(workerData.control), interrupt = new Int32Array(workerData.interrupt);
for (;;) {
  const seq = Atomics.load(control, 0);
  if ((seq & 1) === 0) { Atomics.wait(control, 0, seq); continue; }
  if (Atomics.wait(control, 0, seq, Atomics.load(control, 1)) !== 'timed-out') continue;
  // Still the same call: interrupt it, and again every 100 ms while it keeps running (a handler may catch one).
  while (Atomics.load(control, 0) === seq) {
    Atomics.store(control, 2, 1);
    Atomics.store(interrupt, 0, 2);
    Atomics.wait(control, 0, seq, 100);
  }
}`;
const watchdogThread = new Worker(WATCHDOG, { eval: true, workerData: { control: control.buffer, interrupt: interrupt.buffer } });
watchdogThread.unref();

/** Runs `fn` with the watchdog armed for `budgetMs`; says whether the budget ran out meanwhile. */
function guarded<T>(budgetMs: number, fn: () => T): { value: T; expired: boolean } {
  Atomics.store(control, 2, 0);
  Atomics.store(control, 1, Math.max(1, Math.round(budgetMs)));
  Atomics.add(control, 0, 1);
  Atomics.notify(control, 0);
  try {
    const value = fn();
    return { value, expired: Atomics.load(control, 2) === 1 };
  } finally {
    Atomics.add(control, 0, 1);
    Atomics.notify(control, 0);
    Atomics.store(interrupt, 0, 0);
  }
}

interface PyProxy {
  (...args: unknown[]): PyProxy;
  toJs(options?: { dict_converter?: (entries: Iterable<[unknown, unknown]>) => unknown }): unknown;
  destroy(): void;
}
interface Driver {
  open_file: PyProxy;
  seal: PyProxy;
  run_top_level: PyProxy;
  begin: PyProxy;
  step: PyProxy;
  statements: PyProxy;
  coverage: PyProxy;
}

/** A Python failure dict, as python-driver.ts builds it. */
type PyFailure = HostFailure & { line?: number; column?: number };

/** Turns a Python result (None, or a dict) into plain JavaScript and frees the proxy. */
function plain(result: unknown): Record<string, unknown> | null {
  if (result === undefined || result === null) return null;
  const proxy = result as PyProxy;
  try {
    return proxy.toJs({ dict_converter: Object.fromEntries }) as Record<string, unknown>;
  } finally {
    proxy.destroy();
  }
}

// --- start-up: Pyodide from a memory snapshot --------------------------------------------------------
// Starting the interpreter (its standard library unpacked, the modules it imports at start-up) costs ~4.7
// CPU-seconds; restoring a memory snapshot of an interpreter just started costs ~1.3. The first host on a
// machine starts Pyodide in full and saves the snapshot, taken before any reward code ran or the driver was
// loaded, so every sandbox still begins from a fresh interpreter; the others restore it. A snapshot that does
// not load (damaged, or written by another Pyodide) is ignored and replaced.
type Pyodide = Awaited<ReturnType<typeof import('pyodide').loadPyodide>>;
const PYODIDE_OPTIONS = { env: {}, args: ['-I'] };

/** The snapshot file: keyed by Pyodide's version and the start-up options that shape the interpreter's state. */
function snapshotFile(version: string): string {
  const key = createHash('sha256')
    .update(JSON.stringify({ version, ...PYODIDE_OPTIONS }))
    .digest('hex')
    .slice(0, 16);
  return path.join(cacheDir('pyodide'), `pyodide-${version}-${key}.snapshot`);
}

async function startPyodide(): Promise<Pyodide> {
  // Bundled (dist/python-host.js, also in the .vsix), Pyodide's files are in dist/pyodide/ (build.mjs); from sources, its package.
  const bundled = path.join(__dirname, 'pyodide', 'pyodide.js');
  const { loadPyodide, version } = require(existsSync(bundled) ? bundled : 'pyodide') as typeof import('pyodide');
  const options = { ...PYODIDE_OPTIONS, jsglobals: Object.freeze(Object.create(null)), stdout: () => {}, stderr: () => {} };
  const file = snapshotFile(version);
  let snapshot: Uint8Array | null = null;
  try {
    snapshot = readFileSync(file);
  } catch {
    /* none yet */
  }
  if (snapshot) {
    try {
      return await loadPyodide({ ...options, _loadSnapshot: snapshot });
    } catch {
      /* not a snapshot this Pyodide restores: start in full and replace it */
    }
  }
  const pyodide = await loadPyodide({ ...options, _makeSnapshot: true });
  try {
    writeAtomic(path.dirname(file), file, pyodide.makeMemorySnapshot(), { tmpSuffix: `.${process.pid}.tmp` });
  } catch {
    /* a cache that cannot be written: the next sandbox starts in full too */
  }
  return pyodide;
}

class PythonSandbox {
  private driver!: Driver;
  private slowSteps = 0;

  private constructor(private readonly req: PythonOpenRequest) {}

  static async open(req: PythonOpenRequest): Promise<{ sandbox: PythonSandbox } | { failure: HostFailure }> {
    const sandbox = new PythonSandbox(req);
    const failure = await sandbox.start();
    return failure ? { failure } : { sandbox };
  }

  private async start(): Promise<HostFailure | null> {
    const pyodide = await startPyodide();
    pyodide.setInterruptBuffer(interrupt);
    const memory = (pyodide as unknown as { _module: { HEAP8: Int8Array } })._module.HEAP8.buffer.byteLength;
    memoryCapBytes = memory + this.req.limits.memoryMb * 2 ** 20;
    const { limits } = this.req;
    const namespace = (pyodide.globals.get('dict') as PyProxy)() as unknown as import('pyodide/ffi').PyProxy;
    pyodide.runPython(pythonDriver(this.req.observation), { globals: namespace as never });
    const make = (namespace as unknown as { get(name: string): PyProxy }).get('make_driver');
    const driver = make(
      this.req.file,
      limits.errorChars,
      this.req.sparseWeight,
      this.req.denseWeight,
      limits.callCpuMs,
      PYTHON_BUILTINS,
      this.req.coverage,
    ) as unknown as Record<string, PyProxy>;
    this.driver = {
      open_file: driver.open_file!,
      seal: driver.seal!,
      run_top_level: driver.run_top_level!,
      begin: driver.begin!,
      step: driver.step!,
      statements: driver.statements!,
      coverage: driver.coverage!,
    };
    const compiled = plain(this.driver.open_file(this.req.source, this.req.attack));
    if (compiled) return compiled as unknown as HostFailure;
    this.driver.seal();
    const ran = guarded(limits.topLevelMs, () => plain(this.driver.run_top_level()));
    const failure = ran.value as PyFailure | null;
    if (failure?.kind === 'timeout' || ran.expired) {
      return {
        ...failure,
        kind: 'timeout',
        message: `the file's top level did not finish within ${limits.topLevelMs} ms (the limit for code outside the reward functions, run once)`,
        env: null,
        fatal: true,
      };
    }
    if (failure?.kind === 'memory' || growthRefused)
      return { ...failure, kind: 'memory', message: `exceeded ${limits.memoryMb} MB heap`, env: null, fatal: true };
    return failure;
  }

  begin(json: string): HostFailure | null {
    const ran = guarded(10_000, () => plain(this.driver.begin(json)));
    if (ran.expired) return { kind: 'timeout', message: 'starting the episodes did not finish within 10000 ms', env: null, fatal: true };
    return ran.value as HostFailure | null;
  }

  private stepBudgetMs(count: number): number {
    return this.req.limits.callWallMs * Math.max(1, count) + this.req.limits.stepSlackMs;
  }

  /** The statements the coverage instrumentation counts, where each is (instrumented sandboxes only). */
  statements(): StatementSpan[] {
    const located = this.driver.statements() as unknown as PyProxy;
    try {
      return (located.toJs() as number[][]).map(([line, column, endLine, endColumn]) => ({
        line: line!,
        column: column!,
        endLine: endLine!,
        endColumn: endColumn!,
      }));
    } finally {
      located.destroy();
    }
  }

  coverage(): CoverageCounts {
    const counts = plain(this.driver.coverage()) as { statements: number; runs: number[]; paidRuns: number[]; paidSum: number[] };
    return {
      statements: counts.statements,
      runs: Float64Array.from(counts.runs),
      paidRuns: Float64Array.from(counts.paidRuns),
      paidSum: Float64Array.from(counts.paidSum),
    };
  }

  step({ newNames, data, count, envs }: PackedStep): { values: number[]; detail?: StepDetail } | { failure: HostFailure } {
    const { limits } = this.req;
    const budget = this.stepBudgetMs(count);
    const cpuBefore = process.cpuUsage();
    const wallBefore = performance.now();
    const ran = guarded(budget, () => plain(this.driver.step(newNames, data, count, envs)));
    const result = ran.value as
      | (PyFailure & { values?: undefined })
      | { values: number[]; slowest_ms: number; slowest_env: number; entry: string; detail?: StepDetail };
    if (growthRefused)
      return { failure: { ...(result.values ? {} : result), kind: 'memory', message: `exceeded ${limits.memoryMb} MB heap`, env: null, fatal: true } };
    if (ran.expired || (!result.values && result.kind === 'timeout')) {
      const n = count;
      const message = `a call did not return within the step's ${budget} ms (${limits.callWallMs} ms per call × ${n} call${n === 1 ? '' : 's'} + ${limits.stepSlackMs} ms)`;
      return { failure: { ...(result.values ? { env: null } : result), kind: 'timeout', message, fatal: true } };
    }
    if (!result.values) return { failure: result };
    // As the TypeScript host: a slow call is a time-out only if the process really computed that long, in
    // SLOW_STEPS_TO_FAIL steps in a row. (The driver times calls one by one only after a step that was slow in
    // all, so the first slow step counts from the next one: SLOW_STEPS_TO_FAIL + 1 steps at most.)
    const cpu = process.cpuUsage(cpuBefore);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const slowestCpuMs = cpuMs - (performance.now() - wallBefore - result.slowest_ms);
    if (result.slowest_ms > limits.callCpuMs && slowestCpuMs > limits.callCpuMs) this.slowSteps++;
    else this.slowSteps = 0;
    if (this.slowSteps >= SLOW_STEPS_TO_FAIL) {
      const message = `exceeded ${limits.callCpuMs} ms per call in ${SLOW_STEPS_TO_FAIL} steps in a row (the last took ${Math.round(result.slowest_ms)} ms)`;
      return { failure: { kind: 'timeout', message, env: result.slowest_env, entry: result.entry, fatal: true } };
    }
    return { values: result.values, ...(result.detail ? { detail: result.detail } : {}) };
  }
}

function failureOf(err: unknown, limits: RewardLimits | null): HostFailure {
  // A JavaScript error out of the interpreter: its stack overflowed, or it ran out of memory outside the cap.
  const message = String((err as Error)?.message ?? err).slice(0, limits?.errorChars ?? 4096);
  if (growthRefused || /memory/i.test(message)) return { kind: 'memory', message: `exceeded ${limits?.memoryMb} MB heap`, env: null, fatal: true };
  return { kind: 'throw', message: `the Python interpreter failed: ${message.split('\n')[0]}`, env: null, fatal: true };
}

function serve(): void {
  let sandbox: PythonSandbox | null = null;
  let limits: RewardLimits | null = null;
  // Requests are handled one at a time, in order (opening is asynchronous: Pyodide loads).
  let queue = Promise.resolve();
  const reply = (r: HostReply) => process.send!(r);
  const handle = async (msg: HostRequest): Promise<void> => {
    try {
      if (msg.op === 'open-python') {
        limits = msg.limits;
        const opened = await PythonSandbox.open(msg);
        if ('failure' in opened) {
          reply({ id: msg.id, ok: false, failure: opened.failure });
          return;
        }
        sandbox = opened.sandbox;
        reply({ id: msg.id, ok: true, ...(msg.coverage ? { statements: sandbox.statements() } : {}) });
      } else if (!sandbox) {
        reply({ id: msg.id, ok: false, failure: { kind: 'contract', message: 'the Python sandbox is not open', env: null, fatal: true } });
      } else if (msg.op === 'begin') {
        const failure = sandbox.begin(msg.json);
        reply(failure ? { id: msg.id, ok: false, failure } : { id: msg.id, ok: true });
      } else if (msg.op === 'step') {
        const r = sandbox.step(msg);
        reply('values' in r ? { id: msg.id, ok: true, values: r.values, detail: r.detail } : { id: msg.id, ok: false, failure: r.failure });
      } else if (msg.op === 'coverage') {
        reply({ id: msg.id, ok: true, coverage: sandbox.coverage() });
      } else {
        reply({ id: msg.id, ok: false, failure: { kind: 'contract', message: `the Python sandbox does not run ${msg.op}`, env: null, fatal: true } });
      }
    } catch (err) {
      reply({ id: msg.id, ok: false, failure: failureOf(err, limits) });
    }
  };
  process.on('message', (msg: HostRequest) => {
    queue = queue.then(() => handle(msg));
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.send) serve();
