// Worker threads that answer synchronously: how a worker entry starts (bundle or TypeScript source) and the one
// hand-over the env shards and the PPO value head use. A request is a message on a private MessagePort plus a
// bump of a shared counter that wakes the blocked worker (Atomics.wait); the reply comes back the same way and
// is taken with receiveMessageOnPort. A hand-over thus costs tens of microseconds, where the event loop's
// wake-ups (a message event each way) cost about a third of a millisecond on a 2-core VM.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type MessagePort, type ResourceLimits, receiveMessageOnPort, Worker } from 'node:worker_threads';

/** Slots of the shared signal words: requests posted to the worker, replies posted by it. */
export const SIGNAL_REQUEST = 0;
export const SIGNAL_REPLY = 1;

/** A fresh pair of signal words (requests, replies), shared with the worker in its init message. */
export const newSignal = (): Int32Array => new Int32Array(new SharedArrayBuffer(8));

/** Posts `msg` on `port` and bumps `slot` of the signal words, waking the thread that waits on it. */
export function signalPost(port: MessagePort, signal: Int32Array, slot: number, msg: unknown, transfer: ArrayBuffer[] = []): void {
  port.postMessage(msg, transfer);
  Atomics.add(signal, slot, 1);
  Atomics.notify(signal, slot);
}

/**
 * Starts a worker entry: the dist bundle `bundle` next to the running bundle, or (tests, benches under tsx) its TS
 * `source` through tsx's CommonJS hook, since ESM loader flags do not reach worker threads reliably.
 */
export function startWorker(bundle: string, source: string, resourceLimits?: ResourceLimits): Worker {
  const bundled = path.join(__dirname, bundle);
  if (__filename.endsWith('.js') && existsSync(bundled)) return new Worker(bundled, { resourceLimits });
  const tsx = createRequire(__filename).resolve('tsx/cjs'); // resolved here: an eval worker resolves from the cwd
  return new Worker(`require(${JSON.stringify(tsx)}); require(${JSON.stringify(source)});`, { eval: true, execArgv: [], resourceLimits });
}

/** A worker's failure as a reply: its message for the user's one line, its stack apart (shown with REWARDSMITH_DEBUG=1). */
export interface ErrorReply {
  type: 'error';
  message: string;
  stack?: string;
}

export const errorReply = (err: unknown): ErrorReply =>
  err instanceof Error ? { type: 'error', message: err.message, stack: err.stack } : { type: 'error', message: String(err) };

/** A worker's error reply as an error in the calling thread: `who: message`, the worker's stack after this thread's. */
export function workerError(who: string, reply: ErrorReply): Error {
  const err = new Error(`${who}: ${reply.message}`);
  if (reply.stack) err.stack = `${err.stack}\nin the ${who}: ${reply.stack}`;
  return err;
}

/**
 * The calling thread's side, once the reply counter has moved past the replies it has taken: the reply from the port,
 * a worker's error reply thrown as `who: message` (workerError).
 */
export function takeReply<Reply extends { type: string }>(port: MessagePort, who: string): Exclude<Reply, ErrorReply> {
  const reply = receiveMessageOnPort(port)?.message as Reply | ErrorReply | undefined;
  if (!reply) throw new Error(`${who} signalled a reply but sent none`);
  if (reply.type === 'error') throw workerError(who, reply as ErrorReply);
  return reply as Exclude<Reply, ErrorReply>;
}

/**
 * A worker's side of the hand-over, in a blocking loop: wait for the request counter to move, take the message,
 * answer with `handle`'s reply (none where it returns null; a thrown error as an ErrorReply), bump the reply
 * counter. Returns after replying `closed`.
 */
export function serveRequests<Request, Reply extends { type: string }>(
  port: MessagePort,
  signal: Int32Array,
  handle: (msg: Request) => { reply: Reply; transfer?: ArrayBuffer[] } | null,
): void {
  let requestsSeen = 0;
  for (;;) {
    Atomics.wait(signal, SIGNAL_REQUEST, requestsSeen);
    if (Atomics.load(signal, SIGNAL_REQUEST) === requestsSeen) continue;
    requestsSeen++;
    const msg = receiveMessageOnPort(port)?.message as Request | undefined;
    let answer: { reply: Reply | ErrorReply; transfer?: ArrayBuffer[] } | null;
    try {
      if (msg === undefined) throw new Error('signalled a request but none came');
      answer = handle(msg);
    } catch (err) {
      answer = { reply: errorReply(err) };
    }
    if (!answer) continue;
    signalPost(port, signal, SIGNAL_REPLY, answer.reply, answer.transfer);
    if (answer.reply.type === 'closed') {
      port.close();
      return;
    }
  }
}
