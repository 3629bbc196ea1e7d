// Batches of simulated environments: `SimBatch` steps a shard of envs in the current thread; `SimVecEnv`
// is the VecEnv over one shard (in-process) or several shards in worker threads (one per core), which is how
// the simulator uses the second core.
import { availableParallelism } from 'node:os';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { TaskSpec } from '../../tasks';
import type { EnvOptions, StepInfo, StepObservation, VecEnv, VecStepResult } from '../types';
import { SimEnv } from './sim';
import { hash32 } from './worldgen';

/** Seed of env `index`'s next episode after an episode on `seed`: a fixed per-env stream. */
export const nextEpisodeSeed = (seed: number, index: number) => hash32(seed, index, 0x5eed);

/** A shard of environments stepped in this thread. `firstIndex` keeps seed streams global across shards. */
export class SimBatch {
  readonly envs: SimEnv[];
  readonly featureSize: number;
  private readonly seeds: number[];

  constructor(task: TaskSpec, count: number, private readonly firstIndex: number) {
    this.envs = Array.from({ length: count }, () => new SimEnv(task));
    this.featureSize = this.envs[0]?.featureSize ?? new SimEnv(task).featureSize;
    this.seeds = new Array<number>(count).fill(0);
  }

  reset(seeds: number[]): { features: Float32Array; obs: StepObservation[] } {
    const features = new Float32Array(this.envs.length * this.featureSize);
    const obs = this.envs.map((env, i) => {
      this.seeds[i] = seeds[i]! >>> 0;
      return env.reset(this.seeds[i]!, features, i * this.featureSize);
    });
    return { features, obs };
  }

  step(actions: Int32Array): VecStepResult {
    const n = this.envs.length, f = this.featureSize;
    const features = new Float32Array(n * f);
    const obs: StepObservation[] = new Array(n);
    const info: StepInfo[] = new Array(n);
    const resetObs: (StepObservation | null)[] = new Array(n).fill(null);
    for (let i = 0; i < n; i++) {
      const env = this.envs[i]!;
      const r = env.step(actions[i]!, features, i * f);
      obs[i] = r.obs;
      info[i] = r.info;
      if (r.info.done) {
        this.seeds[i] = nextEpisodeSeed(this.seeds[i]!, this.firstIndex + i);
        resetObs[i] = env.reset(this.seeds[i]!, features, i * f);
      }
    }
    return { features, obs, info, resetObs };
  }
}

/** Messages between SimVecEnv and its workers (runner/src/env/worker.ts). */
export type WorkerRequest =
  | { type: 'init'; task: TaskSpec; count: number; firstIndex: number }
  | { type: 'reset'; seeds: number[] }
  | { type: 'step'; actions: Int32Array };
export type WorkerReply =
  | { type: 'ready'; featureSize: number }
  | { type: 'reset'; features: Float32Array; obs: StepObservation[] }
  | { type: 'step'; result: VecStepResult }
  | { type: 'error'; message: string };

/**
 * Starts the worker entry: the dist bundle next to the running bundle, or (tests, benches under tsx) the TS
 * source through tsx's CommonJS hook, since ESM loader flags do not reach worker threads reliably.
 */
function startWorker(): Worker {
  const bundled = path.join(__dirname, 'env-worker.js');
  if (__filename.endsWith('.js') && existsSync(bundled)) return new Worker(bundled);
  const source = path.join(__dirname, '..', 'worker.ts');
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(source)});`, { eval: true, execArgv: [] });
}

class ShardWorker {
  private readonly worker: Worker;
  private pending: { resolve: (r: WorkerReply) => void; reject: (e: Error) => void } | null = null;
  private failure: Error | null = null;

  constructor() {
    this.worker = startWorker();
    this.worker.on('message', (reply: WorkerReply) => {
      const p = this.pending;
      this.pending = null;
      if (!p) return;
      if (reply.type === 'error') p.reject(new Error(`env worker: ${reply.message}`));
      else p.resolve(reply);
    });
    const fail = (err: Error) => {
      this.failure = err;
      this.pending?.reject(err);
      this.pending = null;
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => {
      if (code !== 0) fail(new Error(`env worker exited with code ${code}`));
    });
  }

  request(msg: WorkerRequest, transfer: ArrayBuffer[] = []): Promise<WorkerReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage(msg, transfer);
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

/** The simulator's VecEnv. With `workers` > 0 the envs are split into that many worker-thread shards. */
export class SimVecEnv implements VecEnv {
  readonly backend = 'sim' as const;
  readonly numEnvs: number;
  featureSize = 0;
  private local: SimBatch | null = null;
  private shards: { worker: ShardWorker; first: number; count: number }[] = [];

  private constructor(readonly task: TaskSpec, numEnvs: number) {
    this.numEnvs = numEnvs;
  }

  static async create(opts: EnvOptions, workers: number): Promise<SimVecEnv> {
    const env = new SimVecEnv(opts.task, opts.numEnvs);
    const shardCount = Math.max(0, Math.min(workers, opts.numEnvs));
    if (shardCount === 0) {
      env.local = new SimBatch(opts.task, opts.numEnvs, 0);
      env.featureSize = env.local.featureSize;
      return env;
    }
    let first = 0;
    for (let s = 0; s < shardCount; s++) {
      const count = Math.floor(opts.numEnvs / shardCount) + (s < opts.numEnvs % shardCount ? 1 : 0);
      env.shards.push({ worker: new ShardWorker(), first, count });
      first += count;
    }
    try {
      const replies = await Promise.all(env.shards.map((sh) => sh.worker.request({ type: 'init', task: opts.task, count: sh.count, firstIndex: sh.first })));
      const r = replies[0]!;
      if (r.type !== 'ready') throw new Error('env worker did not initialise');
      env.featureSize = r.featureSize;
    } catch (err) {
      await env.close();
      throw err;
    }
    return env;
  }

  async reset(seeds: number[]): Promise<{ features: Float32Array; obs: StepObservation[] }> {
    if (seeds.length !== this.numEnvs) throw new Error(`reset needs ${this.numEnvs} seeds, got ${seeds.length}`);
    if (this.local) return this.local.reset(seeds);
    const replies = await Promise.all(this.shards.map((sh) => sh.worker.request({ type: 'reset', seeds: seeds.slice(sh.first, sh.first + sh.count) })));
    const features = new Float32Array(this.numEnvs * this.featureSize);
    const obs: StepObservation[] = [];
    replies.forEach((r, s) => {
      if (r.type !== 'reset') throw new Error('unexpected env worker reply');
      features.set(r.features, this.shards[s]!.first * this.featureSize);
      obs.push(...r.obs);
    });
    return { features, obs };
  }

  async step(actions: Int32Array): Promise<VecStepResult> {
    if (actions.length !== this.numEnvs) throw new Error(`step needs ${this.numEnvs} actions, got ${actions.length}`);
    if (this.local) return this.local.step(actions);
    const replies = await Promise.all(this.shards.map((sh) => {
      const part = actions.slice(sh.first, sh.first + sh.count);
      return sh.worker.request({ type: 'step', actions: part }, [part.buffer as ArrayBuffer]);
    }));
    const features = new Float32Array(this.numEnvs * this.featureSize);
    const obs: StepObservation[] = [], info: StepInfo[] = [], resetObs: (StepObservation | null)[] = [];
    replies.forEach((r, s) => {
      if (r.type !== 'step') throw new Error('unexpected env worker reply');
      features.set(r.result.features, this.shards[s]!.first * this.featureSize);
      obs.push(...r.result.obs);
      info.push(...r.result.info);
      resetObs.push(...r.result.resetObs);
    });
    return { features, obs, info, resetObs };
  }

  async close(): Promise<void> {
    const shards = this.shards;
    this.shards = [];
    await Promise.all(shards.map((sh) => sh.worker.close()));
  }
}

/** Default worker count: one per core when the batch is big enough to amortise the messages. */
export function defaultWorkers(numEnvs: number): number {
  return numEnvs >= 8 ? Math.min(availableParallelism(), Math.floor(numEnvs / 4)) : 0;
}
