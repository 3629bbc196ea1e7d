// Batches of simulated environments: `SimBatch` steps a shard of envs in the current thread; `SimVecEnv`
// is the VecEnv over one shard (in-process) or several shards in worker threads (one per core), which is how
// the simulator uses the second core.
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { type ErrorReply, newSignal, SIGNAL_REPLY, SIGNAL_REQUEST, signalPost, startWorker, takeReply } from '../../threads';
import type { TaskSpec } from '../../tasks';
import { type EnvOptions, HOLD_ACTION, type SplitStepVecEnv, type StepInfo, type StepObservation, type VecStepResult } from '../types';
import { SimEnv } from './sim';
import { nextEpisodeSeed } from '../../seeds';

/** A shard of environments stepped in this thread. `firstIndex` keeps seed streams global across shards. */
export class SimBatch {
  readonly envs: SimEnv[];
  readonly featureSize: number;
  private readonly seeds: number[];
  /** Each env's last observation and info, repeated for an env held (HOLD_ACTION). */
  private readonly lastObs: StepObservation[];
  private readonly lastInfo: (StepInfo | null)[];

  constructor(
    task: TaskSpec,
    count: number,
    private readonly firstIndex: number,
  ) {
    this.envs = Array.from({ length: count }, () => new SimEnv(task));
    this.featureSize = this.envs[0]?.featureSize ?? new SimEnv(task).featureSize;
    this.seeds = new Array<number>(count).fill(0);
    this.lastObs = new Array<StepObservation>(count);
    this.lastInfo = new Array<StepInfo | null>(count).fill(null);
  }

  /** Leaves every env's world (their memory given back); the batch may be reset again. */
  close(): void {
    for (const env of this.envs) env.close();
  }

  reset(seeds: number[]): { features: Float32Array; obs: StepObservation[] } {
    const features = new Float32Array(this.envs.length * this.featureSize);
    const obs = this.envs.map((env, i) => {
      this.seeds[i] = seeds[i]! >>> 0;
      this.lastInfo[i] = null;
      return (this.lastObs[i] = env.reset(this.seeds[i]!, features, i * this.featureSize));
    });
    return { features, obs };
  }

  step(actions: Int32Array): VecStepResult {
    const n = this.envs.length,
      f = this.featureSize;
    const features = new Float32Array(n * f);
    const obs: StepObservation[] = new Array(n);
    const info: StepInfo[] = new Array(n);
    const resetObs: (StepObservation | null)[] = new Array(n).fill(null);
    const terminalFeatures: (Float32Array | null)[] = new Array(n).fill(null);
    for (let i = 0; i < n; i++) {
      const env = this.envs[i]!;
      if (actions[i] === HOLD_ACTION) {
        const last = this.lastInfo[i];
        if (!last) throw new Error(`env ${this.firstIndex + i} held before its first step`);
        obs[i] = this.lastObs[i]!;
        info[i] = last;
        continue;
      }
      const r = env.step(actions[i]!, features, i * f);
      obs[i] = this.lastObs[i] = r.obs;
      info[i] = this.lastInfo[i] = r.info;
      if (r.info.truncated) terminalFeatures[i] = features.slice(i * f, (i + 1) * f);
      if (r.info.done) {
        this.seeds[i] = nextEpisodeSeed(this.seeds[i]!, this.firstIndex + i);
        resetObs[i] = env.reset(this.seeds[i]!, features, i * f);
      }
    }
    return { features, obs, info, resetObs, terminalFeatures };
  }
}

/** Messages between SimVecEnv and its workers (runner/src/env/worker.ts). */
export type WorkerRequest =
  | { type: 'init'; task: TaskSpec; count: number; firstIndex: number; port: MessagePort; signal: SharedArrayBuffer }
  | { type: 'reset'; seeds: number[] }
  | { type: 'step'; actions: Int32Array }
  | { type: 'close' };
export type WorkerReply =
  | { type: 'ready'; featureSize: number }
  | { type: 'reset'; features: Float32Array; obs: StepObservation[] }
  | { type: 'step'; result: VecStepResult }
  | { type: 'closed' }
  | ErrorReply;

/**
 * A worker's young generation: 96 MB (32 MB semi-spaces; V8's default tops out at 16). A step's garbage
 * (observations, dicts, boxed numbers) dies young; with the bigger nursery V8 scavenges less often and copies
 * less. `rollout --envs 64` (approach-tree), 3 alternated pairs on a quiet machine: 10,073, 10,150, 10,728 →
 * 10,458, 10,685, 11,387 steps/s (the same setting for the whole process, --max-semi-space-size=32: 5 of 5 pairs
 * faster, 9,890 → 10,550 on average; the calling thread's heap is set before this code runs).
 */
const WORKER_HEAP = { maxYoungGenerationSizeMb: 96 };

/**
 * One worker thread. After `init` the worker serves requests in a blocking loop, handed over as threads.ts
 * describes: tens of microseconds a step, where the event loop's wake-ups would cost 5 % of a 64-env step.
 */
class ShardWorker {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  /** The worker's end of the private channel, until `sendInit` hands it over. */
  private workerPort: MessagePort | null;
  private readonly signal = newSignal();
  private repliesSeen = 0;
  private failure: Error | null = null;
  private busy = false;

  constructor() {
    this.worker = startWorker('env-worker.js', path.join(__dirname, '..', 'worker.ts'), WORKER_HEAP);
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.workerPort = channel.port2;
    const fail = (err: Error) => {
      this.failure ??= err;
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => {
      if (code !== 0) fail(new Error(`env worker exited with code ${code}`));
    });
  }

  /** The first request (through the worker's own message port): starts its loop on the private port. */
  sendInit(task: TaskSpec, count: number, firstIndex: number): void {
    const port = this.workerPort!;
    this.workerPort = null;
    const msg: WorkerRequest = { type: 'init', task, count, firstIndex, port, signal: this.signal.buffer as SharedArrayBuffer };
    this.worker.postMessage(msg, [port]);
  }

  /** Posts a request; its reply is taken with `receive`. */
  send(msg: WorkerRequest, transfer: ArrayBuffer[] = []): void {
    if (this.failure) throw this.failure;
    signalPost(this.port, this.signal, SIGNAL_REQUEST, msg, transfer);
  }

  /**
   * The reply to the last request. Waits synchronously (the caller has nothing else to do), but gives the event
   * loop a turn every 50 ms so that a worker that died is noticed (its 'exit' and 'error' events) instead of
   * waited on for ever.
   */
  async receive(): Promise<WorkerReply> {
    if (this.busy) throw new Error('env worker: a request is already waiting for its reply');
    this.busy = true;
    try {
      while (Atomics.load(this.signal, SIGNAL_REPLY) === this.repliesSeen) {
        if (Atomics.wait(this.signal, SIGNAL_REPLY, this.repliesSeen, 50) !== 'timed-out') continue;
        await new Promise((resolve) => setImmediate(resolve));
        if (this.failure) throw this.failure;
      }
      this.repliesSeen++;
      return takeReply<WorkerReply>(this.port, 'env worker');
    } finally {
      this.busy = false;
    }
  }

  async close(): Promise<void> {
    if (!this.failure && this.workerPort === null) {
      try {
        this.send({ type: 'close' });
        await this.receive();
      } catch {
        // terminated below either way
      }
    }
    this.port.close();
    await this.worker.terminate();
  }
}

/**
 * The simulator's VecEnv. The envs are split into shards: one stepped in this thread and one per worker
 * thread; a step starts the workers, steps the local shard meanwhile, then gathers, so with W workers the
 * batch uses W + 1 cores and the calling thread is never idle while the workers run. The same three moves are
 * open to a caller (SplitStepVecEnv), which can then work on the local envs' results while the workers step.
 */
export class SimVecEnv implements SplitStepVecEnv {
  readonly backend = 'sim' as const;
  readonly numEnvs: number;
  featureSize = 0;
  private local!: SimBatch;
  private localCount = 0;
  private shards: { worker: ShardWorker; first: number; count: number }[] = [];
  /** A remote step was started and its replies are not taken yet. */
  private remoteRunning = false;

  private constructor(
    readonly task: TaskSpec,
    numEnvs: number,
  ) {
    this.numEnvs = numEnvs;
  }

  static async create(opts: EnvOptions, workers: number): Promise<SimVecEnv> {
    const env = new SimVecEnv(opts.task, opts.numEnvs);
    const parts = Math.max(1, Math.min(workers + 1, opts.numEnvs));
    const sizes = shardSizes(opts.numEnvs, parts, opts.callerWork);
    env.localCount = sizes[0]!;
    env.local = new SimBatch(opts.task, env.localCount, 0);
    env.featureSize = env.local.featureSize;
    let first = env.localCount;
    for (const count of sizes.slice(1)) {
      env.shards.push({ worker: new ShardWorker(), first, count });
      first += count;
    }
    try {
      for (const sh of env.shards) sh.worker.sendInit(opts.task, sh.count, sh.first);
      const replies: WorkerReply[] = [];
      for (const sh of env.shards) replies.push(await sh.worker.receive());
      for (const r of replies) if (r.type !== 'ready' || r.featureSize !== env.featureSize) throw new Error('env worker did not initialise');
    } catch (err) {
      await env.close();
      throw err;
    }
    return env;
  }

  /** Worker threads in use (the calling thread steps a shard as well). */
  get workerCount(): number {
    return this.shards.length;
  }

  /** Envs stepped in this thread (the first ones); the workers step the rest. */
  get localEnvs(): number {
    return this.localCount;
  }

  async reset(seeds: number[]): Promise<{ features: Float32Array; obs: StepObservation[] }> {
    if (this.remoteRunning) throw new Error('reset while a remote step is running');
    if (seeds.length !== this.numEnvs) throw new Error(`reset needs ${this.numEnvs} seeds, got ${seeds.length}`);
    for (const sh of this.shards) sh.worker.send({ type: 'reset', seeds: seeds.slice(sh.first, sh.first + sh.count) });
    const mine = this.local.reset(seeds.slice(0, this.localCount));
    if (this.shards.length === 0) return mine;
    const replies = await this.receiveAll();
    const features = new Float32Array(this.numEnvs * this.featureSize);
    features.set(mine.features, 0);
    const obs: StepObservation[] = mine.obs;
    replies.forEach((r, s) => {
      if (r.type !== 'reset') throw new Error('unexpected env worker reply');
      features.set(r.features, this.shards[s]!.first * this.featureSize);
      for (const o of r.obs) obs.push(o);
    });
    return { features, obs };
  }

  async step(actions: Int32Array): Promise<VecStepResult> {
    if (actions.length !== this.numEnvs) throw new Error(`step needs ${this.numEnvs} actions, got ${actions.length}`);
    if (this.shards.length === 0) return this.local.step(actions);
    this.startRemoteStep(actions.subarray(this.localCount));
    const mine = this.local.step(actions.subarray(0, this.localCount));
    return joinResults(mine, await this.finishRemoteStep(), this.featureSize);
  }

  startRemoteStep(actions: Int32Array): void {
    if (actions.length !== this.numEnvs - this.localCount)
      throw new Error(`a remote step needs ${this.numEnvs - this.localCount} actions, got ${actions.length}`);
    if (this.remoteRunning) throw new Error('a remote step is already running');
    if (this.shards.length === 0) throw new Error('no env worker to step remotely');
    for (const sh of this.shards) {
      const part = actions.slice(sh.first - this.localCount, sh.first - this.localCount + sh.count);
      sh.worker.send({ type: 'step', actions: part }, [part.buffer as ArrayBuffer]);
    }
    this.remoteRunning = true;
  }

  async finishRemoteStep(): Promise<VecStepResult> {
    if (!this.remoteRunning) throw new Error('no remote step is running');
    this.remoteRunning = false;
    const results = (await this.receiveAll()).map((r) => {
      if (r.type !== 'step') throw new Error('unexpected env worker reply');
      return r.result;
    });
    return results.reduce((all, r) => joinResults(all, r, this.featureSize));
  }

  stepLocal(actions: Int32Array): VecStepResult {
    if (actions.length !== this.localCount) throw new Error(`a local step needs ${this.localCount} actions, got ${actions.length}`);
    return this.local.step(actions);
  }

  /** Every worker's reply to the request just sent (all are taken even when one failed: none is left behind). */
  private async receiveAll(): Promise<WorkerReply[]> {
    const replies: WorkerReply[] = [];
    let failure: unknown = null;
    for (const sh of this.shards) {
      try {
        replies.push(await sh.worker.receive());
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure) throw failure;
    return replies;
  }

  async close(): Promise<void> {
    // A remote step still running (a caller that stopped, or failed, between its two halves) is taken first.
    if (this.remoteRunning) await this.finishRemoteStep().catch(() => undefined);
    const shards = this.shards;
    this.shards = [];
    this.local?.close();
    await Promise.all(shards.map((sh) => sh.worker.close()));
  }
}

/** Results of consecutive envs, `first`'s then `then`'s, as one result (the first's arrays grow in place). */
function joinResults(first: VecStepResult, then: VecStepResult, featureSize: number): VecStepResult {
  const features = new Float32Array(first.features.length + then.features.length);
  features.set(first.features, 0);
  features.set(then.features, first.features.length);
  const { obs, info, resetObs, terminalFeatures } = first;
  for (let i = 0; i < then.obs.length; i++) {
    obs.push(then.obs[i]!);
    info.push(then.info[i]!);
    resetObs.push(then.resetObs[i]!);
    terminalFeatures.push(then.terminalFeatures[i]!);
  }
  if (features.length !== obs.length * featureSize) throw new Error('env results of unequal sizes');
  return { features, obs, info, resetObs, terminalFeatures };
}

/**
 * How many envs the calling thread (first) and each worker step. The calling thread also gathers the batch and
 * takes in the workers' replies, which made its shard 7 % slower per env than a worker's (64 envs, approach-tree:
 * 5.07 against 4.72 ms per step, the worker then idle); it gets the share of a thread 0.93 times as fast, so
 * that both finish together (measured: 9,850 → 10,200–10,650 steps/s for 64 envs on 2 cores). A caller that
 * works `callerWork` of an env's step per env besides (EnvOptions.callerWork) steps that much fewer: with W
 * workers, its envs take local / 0.93 + callerWork × numEnvs and each worker's (numEnvs − local) / W.
 */
export function shardSizes(numEnvs: number, parts: number, callerWork = 0): number[] {
  if (parts <= 1) return [numEnvs];
  const workers = parts - 1;
  const balanced = (CALLING_THREAD_SPEED * numEnvs * (1 - workers * callerWork)) / (CALLING_THREAD_SPEED + workers);
  const local = Math.max(1, Math.min(Math.floor(numEnvs / parts), numEnvs - workers, Math.round(balanced)));
  const rest = numEnvs - local;
  return [local, ...Array.from({ length: workers }, (_, w) => Math.floor(rest / workers) + (w < rest % workers ? 1 : 0))];
}
const CALLING_THREAD_SPEED = 0.93;

/** Default worker threads: one per core beyond the calling thread's, when the batch is big enough to share. */
export function defaultWorkers(numEnvs: number): number {
  return numEnvs >= 8 ? Math.min(availableParallelism() - 1, Math.floor(numEnvs / 4)) : 0;
}
