// The value head's share of each PPO minibatch on a second thread. The policy and value heads share no weights,
// so their forward and backward passes are independent: while this thread computes the policy head's, a worker
// (value-worker.ts) computes the value head's with the same kernels on the same inputs, and this thread takes its
// gradients before the gradient norm and Adam. The update is the same to the bit as the one-thread update
// (heads.ts's Head passes and valueLossAndDelta run in both), and the env worker, idle while PPO updates, no longer leaves its core
// unused for all of the update.
// The weights, the minibatch's rows and returns and the gradients live in SharedArrayBuffers; the hand-over is
// threads.ts's (a message and a shared counter each way).
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { type ErrorReply, newSignal, SIGNAL_REPLY, SIGNAL_REQUEST, signalPost, startWorker, takeReply } from '../threads';
import type { FusedActorCritic, ValueThreadLike } from './fused';
import type { Dense, RolloutRows } from './heads';
import type { Minibatch } from './ppo';

/** The value head's layer shapes and the shared arrays the two threads exchange. */
export interface ValueShared {
  layers: { fanIn: number; fanOut: number }[];
  featureSize: number;
  rows: number;
  /** The head's weights and biases in layer order, written by this thread before each minibatch. */
  params: Float32Array;
  rowIndex: Int32Array;
  returns: Float32Array;
  /** The worker's gradients, in the order of `params`. */
  grads: Float64Array;
}

/** The first message, through the worker's own port: the private port and the signal words of every later one. */
export interface ValueInit {
  type: 'init';
  port: MessagePort;
  signal: SharedArrayBuffer;
}
export type ValueRequest =
  | { type: 'share'; shared: ValueShared }
  | { type: 'rollout'; rollout: RolloutRows }
  | { type: 'minibatch'; count: number; valueCoef: number }
  | { type: 'close' };
export type ValueReply = { type: 'ready' } | { type: 'done'; sum: number } | { type: 'closed' } | ErrorReply;

/** The longest a minibatch's value share may take before the update gives up on the worker (a bound, not a figure). */
const REPLY_TIMEOUT_MS = 120_000;
/**
 * The worker entry (its bundle, else its source under tsx) and the longest it may take to start and answer its first
 * request before the update goes on without it.
 */
const VALUE_WORKER = { bundle: 'value-worker.js', source: path.join(__dirname, 'value-worker.ts'), startTimeoutMs: 30_000 };
/** How long closing waits for the worker's goodbye before terminating it. */
const CLOSE_TIMEOUT_MS = 5_000;

/** Float32 views of the head's weights and biases over `params`, in layer order (heads.ts's Dense). */
export function denseViews(layers: ValueShared['layers'], params: Float32Array): Dense[] {
  let o = 0;
  return layers.map(({ fanIn, fanOut }) => {
    const w = params.subarray(o, (o += fanIn * fanOut));
    const b = params.subarray(o, (o += fanOut));
    return { w, b, fanIn, fanOut };
  });
}

const sharedF32 = (n: number) => new Float32Array(new SharedArrayBuffer(4 * Math.max(1, n)));
const sharedI32 = (n: number) => new Int32Array(new SharedArrayBuffer(4 * Math.max(1, n)));

/** A rollout's sparse rows copied into shared memory, for the worker to gather minibatches from. */
function sharedRollout(rollout: RolloutRows): RolloutRows {
  const start = sharedI32(rollout.start.length),
    index = sharedI32(rollout.index.length),
    value = sharedF32(rollout.value.length);
  start.set(rollout.start);
  index.set(rollout.index);
  value.set(rollout.value);
  return { start, index, value };
}

export class ValueThread implements ValueThreadLike {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal = newSignal();
  private repliesSeen = 0;
  private shared: ValueShared | null = null;
  private rollout: RolloutRows | null = null;
  private pending = false;

  /**
   * A value thread for `net`, or null on a single core (where it could only take turns with this thread) and where
   * the worker does not start: the update is the same without it, only slower.
   */
  static start(net: FusedActorCritic, worker: { bundle: string; source: string; startTimeoutMs: number } = VALUE_WORKER): ValueThread | null {
    if (availableParallelism() <= 1) return null;
    const thread = new ValueThread(net, worker);
    try {
      thread.share(1, worker.startTimeoutMs);
      return thread;
    } catch {
      thread.close();
      return null;
    }
  }

  private constructor(
    private readonly net: FusedActorCritic,
    worker: { bundle: string; source: string },
  ) {
    this.worker = startWorker(worker.bundle, worker.source);
    // Idle between updates, blocked in Atomics.wait: it must not keep the process alive. A worker that fails to start
    // is noticed by its silence (start), since this thread waits synchronously; its 'error' must not end the process.
    this.worker.unref();
    this.worker.on('error', () => {});
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.worker.postMessage({ type: 'init', port: channel.port2, signal: this.signal.buffer as SharedArrayBuffer } satisfies ValueInit, [channel.port2]);
  }

  /** Shared arrays for minibatches of up to `rows` rows, handed to the worker. */
  private share(rows: number, timeoutMs = REPLY_TIMEOUT_MS): ValueShared {
    const layers = this.net.valueLayers.map(({ fanIn, fanOut }) => ({ fanIn, fanOut }));
    const total = layers.reduce((n, l) => n + (l.fanIn + 1) * l.fanOut, 0);
    const shared: ValueShared = {
      layers,
      featureSize: this.net.config.featureSize,
      rows,
      params: sharedF32(total),
      rowIndex: sharedI32(rows),
      returns: sharedF32(rows),
      grads: new Float64Array(new SharedArrayBuffer(8 * total)),
    };
    this.request({ type: 'share', shared });
    this.expect('ready', timeoutMs);
    this.shared = shared;
    return shared;
  }

  private request(msg: ValueRequest): void {
    signalPost(this.port, this.signal, SIGNAL_REQUEST, msg);
  }

  /** The worker's next reply, which must be of type `type`. Waits synchronously: this thread has nothing else to do. */
  private expect<T extends ValueReply['type']>(type: T, timeoutMs = REPLY_TIMEOUT_MS): Extract<ValueReply, { type: T }> {
    const deadline = Date.now() + timeoutMs;
    while (Atomics.load(this.signal, SIGNAL_REPLY) === this.repliesSeen) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`PPO value thread: no answer in ${timeoutMs / 1000} s`);
      Atomics.wait(this.signal, SIGNAL_REPLY, this.repliesSeen, left);
    }
    this.repliesSeen++;
    const reply = takeReply<ValueReply>(this.port, 'PPO value thread');
    if (reply.type !== type) throw new Error(`PPO value thread answered "${reply.type}" where "${type}" was due`);
    return reply as Extract<ValueReply, { type: T }>;
  }

  begin(mb: Minibatch, rollout: RolloutRows, valueCoef: number): void {
    if (this.pending) throw new Error('PPO value thread: a minibatch is already running');
    const shared = this.shared && mb.size <= this.shared.rows ? this.shared : this.share(mb.size);
    if (rollout !== this.rollout) {
      this.rollout = rollout;
      this.request({ type: 'rollout', rollout: sharedRollout(rollout) });
    }
    let o = 0;
    for (const { w, b } of this.net.valueLayers) {
      shared.params.set(w, o);
      shared.params.set(b, (o += w.length));
      o += b.length;
    }
    shared.rowIndex.set(mb.rows.subarray(0, mb.size));
    shared.returns.set(mb.returns.subarray(0, mb.size));
    this.request({ type: 'minibatch', count: mb.size, valueCoef });
    this.pending = true;
  }

  finish(grads: Float64Array[]): number {
    if (!this.pending) throw new Error('PPO value thread: no minibatch was begun');
    this.pending = false;
    const { sum } = this.expect('done');
    let o = 0;
    for (const g of grads) g.set(this.shared!.grads.subarray(o, (o += g.length)));
    return sum;
  }

  close(): void {
    try {
      // A worker that never answered is not asked again.
      if (this.shared) {
        if (this.pending) this.expect('done');
        this.request({ type: 'close' });
        this.expect('closed', CLOSE_TIMEOUT_MS);
      }
    } catch {
      // terminated below either way
    }
    this.port.close();
    void this.worker.terminate();
  }
}
