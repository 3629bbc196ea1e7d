// The reward runtime the trainer, the evaluator and the editor call: compile a reward file, open a sandbox
// for it (TypeScript: an isolated-vm isolate in a child process, see sandbox-host.ts; Python: Pyodide in a
// child process, see python-host.ts), begin episodes and step all environments in one boundary crossing per
// step. The language is the file's extension. Every failure is a RewardError located in the original file.
import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import { observationWire, SCALE_RULE, type ObservationWire, type ParameterName, type StepObservation, type WireField } from '../schema';
import { compileRewardFile, COVERAGE_MARKER, LOOP_MARKER, RewardError, SourcePositions, type CompiledReward } from './compile';
import { compilePythonReward, isPythonFile, loadPythonParser } from './python-syntax';
import type { CoverageCounts, HostCommand, HostFailure, HostReply, HostRequest, PackedStep, RewardLimits, StepDetail } from './protocol';

// The reward script's name inside the isolate; stack frames carrying it are mapped to the reward file.
const REWARD_SCRIPT_NAME = 'rewardsmith-reward.js';

export { compilePythonReward, compileRewardFile, isPythonFile, loadPythonParser, RewardError, SourcePositions };
export type { CompiledReward, EntryLocation, RewardErrorKind, RewardExportsKind, StatementLocation } from './compile';
export type { CoverageCounts, RewardLimits, StepDetail };

/**
 * The reward sandbox's limits: one set for training, evaluation, the editor and the designer's prompt
 * (the README's "Reward runtime limits" lists the same). Each failure names the limit that fired.
 */
export const REWARD_LIMITS: Readonly<RewardLimits> = {
  /** CPU time one reward call may use. A call that returns later fails only if the isolate really computed
   * that long, so a loaded machine's scheduling stalls do not count. */
  callCpuMs: 50,
  /** Wall-clock allowance per call in a step: a step of N calls is cut off after N × this + stepSlackMs,
   * which ends a call that never returns (at a load average of 18 on 2 cores, 250 ms failed healthy runs). */
  callWallMs: 1000,
  stepSlackMs: 500,
  /** The file's top level (code outside the functions), run once when the sandbox opens; wall clock. */
  topLevelMs: 2000,
  /** Heap of the isolate for the reward's own use; the contract's history comes on top (see `historyMb`). */
  memoryMb: 256,
  /** Longest error message, and longest stack, that leaves the sandbox (a reward may throw 100 MB). */
  errorChars: 4096,
};

export interface SandboxOptions {
  /** Tighter or looser limits than REWARD_LIMITS (tests). */
  limits?: Partial<RewardLimits>;
  /** Pass `damage_dealt` and `kill_entity` (attack tasks). Default: whether the file declares them. */
  attack?: boolean;
  /** The task's episode limit: the isolate's heap grows by the history the contract keeps that long. */
  episodeSteps?: number;
  /** The file's text, when it is not (yet) what is on disk (an editor's unsaved buffer). */
  source?: string;
  /** Count each statement's runs per call (probes; see CompiledReward.statements). Training runs without. */
  coverage?: boolean;
  /**
   * Start in a warm host if one is idle, and leave the host warm for the next sandbox when this one closes healthy
   * (the probes: the editor and `lint` open one sandbox per file; a host's start is most of a short replay).
   */
  warmHost?: boolean;
}

/**
 * Probes: an env whose `parameter` is, on every call, what the `donor` env's call of the same step receives (the
 * donor's last, when its episode has ended), while everything else is its own episode's; a donor that is the env
 * itself means its own episode one step apart (current and previous nearest blocks trade places, every other input
 * is the previous call's). Such an env's failures do not stop the replay: its value is NaN. Steps must list the
 * donor before the env.
 */
export interface InputSwap {
  parameter: ParameterName;
  donor: number;
}

/** Heap an entry of `past_agent_positions` takes in the isolate: 112 bytes measured (an array of 5 doubles), rounded up. */
const POSITION_ENTRY_BYTES = 128;

/**
 * MiB of `past_agent_positions` the isolate holds at most: one entry per step for every env, up to the episode
 * limit. An explore-diamond evaluation (100 envs × 60,000 steps) keeps 6 million entries, 0.7 GB; counted against
 * the reward's own 256 MB it ended every such evaluation with "exceeded 256 MB heap".
 */
export function historyMb(numEnvs: number, episodeSteps: number): number {
  return Math.ceil((numEnvs * episodeSteps * POSITION_ENTRY_BYTES) / 2 ** 20);
}

// Extra time the parent grants a step beyond the sandbox's own budget before it declares the host hung.
const HOST_GRACE_MS = 5000;

/** A gap this long between two watchdog ticks means this process was not running (see `watchdog`). */
const SUSPENDED_GAP_MS = 3000;

export interface Watchdog {
  clear(): void;
}

/**
 * Calls `expire` once `limitMs` of this process's running time have passed. Time in which the process did not
 * run (the machine slept, the process was stopped with SIGSTOP, its event loop was blocked) does not count: the
 * host could not have been answered then either, and a laptop waking up mid-training must not find its sandbox
 * declared dead.
 */
export function watchdog(limitMs: number, expire: () => void): Watchdog {
  let counted = 0;
  let last = performance.now();
  const tick = setInterval(
    () => {
      const now = performance.now();
      const gap = now - last;
      last = now;
      if (gap < SUSPENDED_GAP_MS) counted += gap;
      if (counted >= limitMs) {
        clearInterval(tick);
        expire();
      }
    },
    Math.min(1000, Math.max(1, limitMs / 4)),
  );
  // A pending request keeps the process alive through its watchdog, as the plain timer did.
  return { clear: () => clearInterval(tick) };
}
// Host start-up (Node and isolated-vm) plus creating the isolate and running the file's top level.
const OPEN_TIMEOUT_MS = 30_000;
/** Pyodide loads in ~3.4 s on an idle machine and took 22 s at a load average of 4 on 2 cores. */
const PYTHON_OPEN_TIMEOUT_MS = 120_000;

/** Heap of the Python host's own JavaScript (the interpreter's memory is WebAssembly, capped by the host). */
const PYTHON_HOST_HEAP_MB = 512;

/** A Python list of 5 floats takes ~2× what the isolate's array does (list 96 B + 5 floats of 24 B, rounded up). */
const PYTHON_HISTORY_FACTOR = 2;

type HostName = 'sandbox-host' | 'python-host';

/**
 * How to start a host: the bundled dist/<name>.js next to a bundle; from sources (tests, tsx), the TS host
 * bundled once with esbuild into node_modules/.cache (keyed by its content), which starts several times
 * faster than the TS file under tsx.
 */
function hostCommand(name: HostName): { modulePath: string; execArgv: string[] } {
  // isolated-vm asks for --no-node-snapshot on Node 20+.
  const execArgv = name === 'sandbox-host' ? ['--no-node-snapshot'] : [`--max-old-space-size=${PYTHON_HOST_HEAP_MB}`];
  if (!__filename.endsWith('.ts')) {
    const bundled = path.join(__dirname, `${name}.js`);
    if (!existsSync(bundled)) throw new Error(`the reward sandbox host ${bundled} is missing; run \`npm run build\``);
    return { modulePath: bundled, execArgv };
  }
  hostsFromSources[name] ??= bundleHostFromSources(name);
  return { modulePath: hostsFromSources[name]!, execArgv };
}

const hostsFromSources: Partial<Record<HostName, string>> = {};

function bundleHostFromSources(name: HostName): string {
  const source = path.join(__dirname, `${name}.ts`);
  // The host's own sources: a change to any of them makes a new bundle.
  const hash = createHash('sha256');
  for (const f of [source, ...['protocol.ts', 'python-driver.ts', '../files.ts'].map((f) => path.join(__dirname, f))]) hash.update(readFileSync(f));
  // Inside the repository's node_modules so that the bundle resolves isolated-vm and pyodide from there.
  const out = path.resolve(__dirname, '../../../node_modules/.cache/rewardsmith', `${name}-${hash.digest('hex').slice(0, 16)}.js`);
  if (!existsSync(out)) {
    // esbuild is a dev dependency, as is tsx, which running from sources already needs.
    const esbuild = require('esbuild') as typeof import('esbuild');
    const tmp = `${out}.${process.pid}.tmp`;
    esbuild.buildSync({
      entryPoints: [source],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      external: ['isolated-vm', 'pyodide'],
      outfile: tmp,
      logLevel: 'error',
    });
    renameSync(tmp, out); // atomic: parallel test processes may race here
  }
  return out;
}

/**
 * Sandbox hosts kept warm between sandboxes (see SandboxOptions.warmHost): a started host whose isolate is gone,
 * waiting for its next `open`. Unreferenced, so they never keep this process alive; they end with it.
 */
const warmHosts: ChildProcess[] = [];
/** More than one would only hold memory: probes open their sandboxes one after another. */
const MAX_WARM_HOSTS = 1;

function forkHost(name: HostName): ChildProcess {
  const host = hostCommand(name);
  return fork(host.modulePath, [], {
    execArgv: host.execArgv,
    serialization: 'advanced',
    // The host never writes to stdout (the CLI's stdout may carry the ndjson event stream).
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: process.versions.electron ? { ...process.env, ELECTRON_RUN_AS_NODE: '1' } : process.env,
  });
}

/** Keeps `child` warm, or ends it when enough are. */
function keepWarm(child: ChildProcess): void {
  if (warmHosts.length >= MAX_WARM_HOSTS || child.exitCode !== null || child.signalCode !== null) {
    child.kill('SIGKILL');
    return;
  }
  child.unref();
  child.channel?.unref();
  (child.stderr as Socket | null)?.unref();
  child.stderr?.resume(); // its stderr is read by the next sandbox; meanwhile it must not fill up
  const gone = () => {
    const i = warmHosts.indexOf(child);
    if (i >= 0) warmHosts.splice(i, 1);
  };
  child.once('close', gone);
  child.once('error', gone);
  warmHosts.push(child);
}

function takeWarmHost(): ChildProcess | undefined {
  for (let child = warmHosts.shift(); child; child = warmHosts.shift()) {
    child.removeAllListeners('close');
    child.removeAllListeners('error');
    if (child.exitCode === null && child.signalCode === null && child.connected) return child;
  }
  return undefined;
}

/**
 * Starts a sandbox host now and keeps it warm, unless one is: the next sandbox opened with `warmHost` (a probe)
 * does not wait for a host to start. The language server calls this when it first sees a reward file.
 */
export function prewarmSandboxHost(): void {
  if (warmHosts.length === 0) keepWarm(forkHost('sandbox-host'));
}

/** Ends the warm hosts (before a long run that will not probe again; benchmarks of a cold start). */
export async function endWarmHosts(): Promise<void> {
  await Promise.all(
    warmHosts.splice(0).map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.ref();
      child.kill('SIGKILL');
      return exited;
    }),
  );
}

/** Process ids of the warm hosts (CPU accounting in benchmarks: they are not reaped children). */
export function warmHostPids(): number[] {
  return warmHosts.flatMap((c) => (c.pid === undefined ? [] : [c.pid]));
}

export class RewardSandbox {
  private nextId = 1;
  private pending = new Map<number, { resolve: (r: HostReply) => void; reject: (e: Error) => void; timer: Watchdog }>();
  /** Set once the sandbox cannot run any more (time-out, memory, host death, close); later calls rethrow it. */
  private dead: Error | null = null;
  private stderrTail = '';
  private readonly positions: SourcePositions;
  private readonly encoder = new ObservationEncoder(OBSERVATION_WIRE);

  private readonly listeners: {
    stderr: (d: Buffer) => void;
    message: (r: HostReply) => void;
    error: (err: Error) => void;
    close: (code: number | null, signal: NodeJS.Signals | null) => void;
  };

  private constructor(
    readonly compiled: CompiledReward,
    readonly numEnvs: number,
    private readonly limits: RewardLimits,
    private readonly child: ChildProcess,
    private readonly warm: boolean,
  ) {
    this.positions = new SourcePositions(compiled);
    // An idle sandbox does not keep the process alive; a pending request does, through its watchdog timer.
    child.unref();
    child.channel?.unref();
    (child.stderr as Socket | null)?.unref();
    this.listeners = {
      stderr: (d) => {
        this.stderrTail = (this.stderrTail + d.toString()).slice(-2000);
      },
      message: (r) => {
        const p = this.pending.get(r.id);
        if (!p) return;
        this.pending.delete(r.id);
        p.timer.clear();
        p.resolve(r);
      },
      // Sending to a host that has just died fails with EPIPE (or a closed channel) before its exit is known;
      // unhandled, that error would end this process. The pending call is answered when the exit comes. A host
      // that could not be started at all has no exit to wait for.
      error: (err) => {
        if (child.pid === undefined) this.fail({ kind: 'host', message: `the sandbox host could not be started: ${err.message}`, env: null });
      },
      // 'close' rather than 'exit': it comes after the host's stderr is read to the end, which says whether V8 ran out of memory.
      close: (code, signal) => this.fail(hostDeath(code, signal, this.stderrTail, limits.memoryMb)),
    };
    child.stderr?.on('data', this.listeners.stderr);
    child.on('message', this.listeners.message);
    child.on('error', this.listeners.error);
    child.on('close', this.listeners.close);
  }

  /** The sandbox cannot run any more: every pending call, and every later one, fails with the first cause. */
  private fail(cause: HostFailure): void {
    this.dead ??= this.locate(cause);
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.timer.clear();
      p.reject(this.dead);
    }
  }

  /** Compiles `file`, starts a host and runs the file's top level. Rejects with a located RewardError. */
  static async open(file: string, numEnvs: number, opts: SandboxOptions = {}): Promise<RewardSandbox> {
    const python = isPythonFile(file);
    if (python) await loadPythonParser();
    const compiled = python
      ? compilePythonReward(file, opts.source ?? readFileSync(file, 'utf8'))
      : compileRewardFile(file, opts.source, { coverage: opts.coverage });
    const attack = opts.attack ?? compiled.attack;
    if (compiled.attack && !attack) {
      const where = compiled.entries.reward_function ?? compiled.entries.dense ?? { line: 1, column: 1 };
      throw new RewardError('contract', file, where.line, where.column, 'the reward takes damage_dealt and kill_entity, which only attack tasks pass');
    }
    const limits: RewardLimits = { ...REWARD_LIMITS, ...opts.limits };
    if (opts.episodeSteps !== undefined) limits.memoryMb += historyMb(numEnvs, opts.episodeSteps) * (python ? PYTHON_HISTORY_FACTOR : 1);
    // Warm hosts are TypeScript hosts (the probes'); a Python sandbox starts its own host.
    const child = python ? forkHost('python-host') : (opts.warmHost && takeWarmHost()) || forkHost('sandbox-host');
    const sandbox = new RewardSandbox(compiled, numEnvs, limits, child, !python && (opts.warmHost ?? false));
    const weights = { sparseWeight: SCALE_RULE.sparseWeight, denseWeight: SCALE_RULE.denseWeight, observation: OBSERVATION_WIRE };
    try {
      if (python) {
        const opened = await sandbox.request(
          { op: 'open-python', file, source: compiled.js, attack, limits, ...weights, coverage: opts.coverage ?? false },
          PYTHON_OPEN_TIMEOUT_MS + limits.topLevelMs,
        );
        // The interpreter's syntax tree decides which statements are counted (python-driver.ts instruments them).
        compiled.statements = opened.statements ?? [];
      } else {
        await sandbox.request(
          {
            op: 'open',
            js: compiled.js,
            exportsKind: compiled.exportsKind,
            attack,
            limits,
            loopMarker: LOOP_MARKER,
            scriptName: REWARD_SCRIPT_NAME,
            ...weights,
            coverage: compiled.statements.length,
            coverageMarker: COVERAGE_MARKER,
          },
          OPEN_TIMEOUT_MS + limits.topLevelMs,
        );
      }
    } catch (err) {
      await sandbox.close();
      throw err;
    }
    return sandbox;
  }

  /**
   * Starts episodes for these envs with their first observation: GLOBAL_DATA = {}, previous nearest blocks =
   * that observation's, past_agent_positions = [its position].
   */
  async beginEpisodes(envs: number[], firstObs: StepObservation[], swaps?: (InputSwap | null)[]): Promise<void> {
    if (envs.length !== firstObs.length) throw new Error(`beginEpisodes: ${envs.length} envs but ${firstObs.length} observations`);
    for (const e of envs) if (!Number.isInteger(e) || e < 0 || e >= this.numEnvs) throw new Error(`beginEpisodes: env ${e} is not in 0..${this.numEnvs - 1}`);
    swaps?.forEach((w, i) => {
      if (w && w.donor !== envs[i] && !envs.slice(0, i).includes(w.donor))
        throw new Error(`beginEpisodes: the donor env ${w.donor} of env ${envs[i]} must begin before it`);
    });
    if (envs.length === 0) return;
    await this.request({ op: 'begin', json: JSON.stringify({ envs, obs: firstObs, ...(swaps ? { swaps } : {}) }) }, HOST_GRACE_MS * 2);
  }

  /**
   * One step for all envs: appends each position to its history, calls the reward with current/previous
   * nearest blocks etc., then previous = current. Returns one reward per env. Throws a RewardError (with
   * the env index) on any failure; after one, begin new episodes before stepping again.
   */
  async step(obs: StepObservation[]): Promise<Float64Array> {
    if (obs.length !== this.numEnvs) throw new Error(`step: expected ${this.numEnvs} observations, got ${obs.length}`);
    const packed = this.encoder.encode(obs);
    const reply = await this.request({ op: 'step', ...packed }, this.limits.callWallMs * obs.length + this.limits.stepSlackMs + HOST_GRACE_MS);
    return valuesOf(reply, obs.length);
  }

  /**
   * One step for some envs (each in its own episode, begun with beginEpisodes): the probes replay episodes of
   * unequal length side by side. With coverage, also the statement that produced each value (and dense/sparse parts).
   */
  async stepEnvs(envs: number[], obs: StepObservation[]): Promise<{ values: Float64Array; detail?: StepDetail }> {
    if (envs.length !== obs.length) throw new Error(`stepEnvs: ${envs.length} envs but ${obs.length} observations`);
    for (const e of envs) if (!Number.isInteger(e) || e < 0 || e >= this.numEnvs) throw new Error(`stepEnvs: env ${e} is not in 0..${this.numEnvs - 1}`);
    const packed = this.encoder.encode(obs);
    const reply = await this.request({ op: 'step', ...packed, envs }, this.limits.callWallMs * obs.length + this.limits.stepSlackMs + HOST_GRACE_MS);
    return { values: valuesOf(reply, obs.length), detail: reply.detail };
  }

  /** What a coverage sandbox counted so far, per env and statement. */
  async coverage(): Promise<CoverageCounts> {
    const reply = await this.request({ op: 'coverage' }, HOST_GRACE_MS * 2);
    return (reply as { coverage: CoverageCounts }).coverage;
  }

  /** Process id of the sandbox host (for CPU accounting in benchmarks). */
  get hostPid(): number | undefined {
    return this.child.pid;
  }

  async close(): Promise<void> {
    const healthy = this.dead === null && this.pending.size === 0;
    this.dead ??= new Error('the reward sandbox is closed');
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    if (this.warm && healthy) {
      // The host drops the isolate (and the reward's heap with it) and waits warm for the next sandbox.
      const dropped = await this.requestRaw({ op: 'dispose' }, HOST_GRACE_MS).then(
        (r) => r.ok,
        () => false,
      );
      this.child.stderr?.off('data', this.listeners.stderr);
      this.child.off('message', this.listeners.message);
      this.child.off('error', this.listeners.error);
      this.child.off('close', this.listeners.close);
      if (dropped) return keepWarm(this.child);
    }
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.ref(); // keep the process alive until the host is gone
    this.child.kill('SIGKILL');
    await exited;
  }

  private request(req: HostCommand, limitMs: number): Promise<HostReply & { ok: true }> {
    if (this.dead) return Promise.reject(this.dead);
    return this.requestRaw(req, limitMs);
  }

  private requestRaw(req: HostCommand, limitMs: number): Promise<HostReply & { ok: true }> {
    const id = this.nextId++;
    return new Promise<HostReply>((resolve, reject) => {
      // The host enforces the limits itself; this only catches a host that stopped answering.
      const timer = watchdog(limitMs, () => {
        this.pending.delete(id);
        const err = this.locate({ kind: 'timeout', message: `the sandbox host stopped answering (no reply within ${limitMs} ms)`, env: null });
        this.dead ??= err;
        this.child.kill('SIGKILL');
        reject(err);
      });
      this.pending.set(id, { resolve, reject, timer });
      // A failed send means the host is gone: its 'close' rejects this call with the cause (see the constructor).
      this.child.send({ ...req, id } as HostRequest, () => {});
    }).then((r) => {
      if (r.ok) return r;
      const err = this.locate(r.failure);
      if (r.failure.fatal) {
        // A timed-out or out-of-memory isolate is not trusted again: end the host; open a new sandbox to retry.
        this.dead ??= err;
        this.child.kill('SIGKILL');
      }
      throw err;
    });
  }

  /**
   * Turns a host failure into a RewardError at the original line of the reward file: the innermost reward
   * frame of its stack, else the loop that was running when a time limit fired, else the function's
   * declaration. The host already cut long messages; this cuts again at the boundary, whatever the host did.
   */
  private locate(f: HostFailure): RewardError {
    const { file, entries, loops } = this.compiled;
    const declared = entries[f.entry ?? ''] ?? (f.entry === undefined && f.kind === 'timeout' ? undefined : (entries.reward_function ?? entries.dense));
    const at = (f.line ? { line: f.line, column: f.column ?? 1 } : undefined) ||
      (f.stack && this.positions.fromStack(f.stack.slice(0, this.limits.errorChars), REWARD_SCRIPT_NAME)) ||
      (f.loop ? loops[f.loop - 1] : undefined) ||
      (f.statement !== undefined && f.statement >= 0 ? this.compiled.statements[f.statement] : undefined) ||
      declared || { line: 1, column: 1 };
    const max = this.limits.errorChars + 60; // room for the host's own "[N more characters cut]"
    const message = f.message.length <= max ? f.message : `${f.message.slice(0, max)} … [${f.message.length - max} more characters cut]`;
    return new RewardError(f.kind, file, at.line, at.column, message, f.env);
  }
}

/**
 * A step's rewards, in an array of their own: the TypeScript host sends a Float64Array, which arrives as a view into
 * the message's bytes, the Python host sends numbers. One per observation, or the host broke the protocol.
 */
function valuesOf(reply: HostReply & { ok: true }, count: number): Float64Array {
  if (reply.values?.length !== count) throw new Error(`reward host: a step of ${count} observations answered with ${reply.values?.length ?? 'no'} rewards`);
  return Float64Array.from(reply.values);
}

/** The host's last words: its last line of stderr that says something (not a stack frame, not Node's version line). */
function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  const telling = lines.filter((l) => l.trim() && !/^\s+at /.test(l) && !/^Node\.js v\d/.test(l.trim()));
  return (telling.pop() ?? lines.pop() ?? '').trim();
}

/** What each signal that ends a host usually means, for the message that names it. */
const SIGNAL_CAUSES: Partial<Record<NodeJS.Signals, string>> = {
  SIGKILL: "killed by another process, or by the system's out-of-memory killer",
  SIGBUS: 'a file it had mapped was changed under it, e.g. Rewardsmith or its native addon was rebuilt or reinstalled while it ran',
  SIGSEGV: 'a crash in the native sandbox addon',
  SIGABRT: 'it aborted',
  SIGTERM: 'asked to stop by another process',
  SIGINT: 'interrupted',
  SIGHUP: 'its terminal went away',
};

/**
 * Why a host that was not asked to stop has gone: memory only when V8 said it ran out of heap, else the
 * signal or exit code, with the host's last line of stderr. Not the reward's fault otherwise (kind `host`).
 */
function hostDeath(code: number | null, signal: NodeJS.Signals | null, stderr: string, memoryMb: number): HostFailure {
  const how = signal ?? `code ${code}`;
  const said = lastLine(stderr);
  if (/heap out of memory|Reached heap limit|Allocation failed/i.test(stderr))
    return { kind: 'memory', message: `exceeded ${memoryMb} MB heap (the sandbox host ran out of memory and exited with ${how}: ${said})`, env: null };
  const why = signal ? `was ended by ${signal} (${SIGNAL_CAUSES[signal] ?? 'a signal from outside, or a crash'})` : `exited with code ${code}`;
  return { kind: 'host', message: `the sandbox host ${why}${said ? `; its last words: ${said}` : ''}`, env: null };
}

/** The observation's description, which the encoder follows and each host's decoder is generated from. */
const OBSERVATION_WIRE: ObservationWire = observationWire();

/**
 * Packs step observations into numbers plus a name table that grows as names first appear (see PackedStep): each
 * field in the description's order, a number as it is, a vector as its numbers, a dict as its size and then
 * per entry the name's id and the value.
 */
class ObservationEncoder {
  private readonly ids = new Map<string, number>();
  private buffer = new Float64Array(4096);
  private length = 0;
  private newNames: string[] = [];
  private readonly writers: ((o: StepObservation) => void)[];

  constructor(wire: ObservationWire) {
    this.writers = wire.fields.map((f) => this.writer(f));
  }

  encode(obs: StepObservation[]): PackedStep {
    this.length = 0;
    this.newNames = [];
    for (const o of obs) for (const write of this.writers) write(o);
    // A view, not a copy: sending copies its bytes (and only those) into the message.
    return { newNames: this.newNames, data: this.buffer.subarray(0, this.length), count: obs.length };
  }

  private writer(f: WireField): (o: StepObservation) => void {
    const { name, vector } = f;
    if (f.dict && vector)
      return (o) => {
        const dict = o[name] as Record<string, number[]>;
        const countAt = this.length;
        this.push(0);
        let n = 0;
        for (const key in dict) {
          this.push(this.id(key));
          const v = dict[key]!;
          for (let i = 0; i < vector; i++) this.push(v[i]!);
          n++;
        }
        this.buffer[countAt] = n;
      };
    if (f.dict)
      return (o) => {
        const dict = o[name] as Record<string, number>;
        const countAt = this.length;
        this.push(0);
        let n = 0;
        for (const key in dict) {
          this.push(this.id(key));
          this.push(dict[key]!);
          n++;
        }
        this.buffer[countAt] = n;
      };
    if (vector)
      return (o) => {
        const v = o[name] as number[];
        for (let i = 0; i < vector; i++) this.push(v[i]!);
      };
    return (o) => this.push(o[name] as number);
  }

  /** The name's id in the table, new names added (the host learns them with the step). */
  private id(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(name, id);
      this.newNames.push(name);
    }
    return id;
  }

  private push(v: number): void {
    if (this.length === this.buffer.length) {
      const grown = new Float64Array(this.buffer.length * 2);
      grown.set(this.buffer);
      this.buffer = grown;
    }
    this.buffer[this.length++] = v;
  }
}
