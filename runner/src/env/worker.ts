// Worker-thread entry (bundled to dist/env-worker.js; run from source under tsx in tests): steps one shard
// of simulated environments for SimVecEnv. The first message (init) brings a private MessagePort and a shared
// signal; from then on the worker serves requests in a blocking loop (see ShardWorker in sim/vec.ts): wait for
// the request counter to move, take the message, reply on the port, bump the reply counter. Features travel
// back as transferred buffers.
import { type MessagePort, parentPort, receiveMessageOnPort } from 'node:worker_threads';
import { SIGNAL_REPLY, SIGNAL_REQUEST, signalPost } from '../threads';
import { SimBatch, type WorkerReply, type WorkerRequest } from './sim/vec';

const initPort = parentPort;
if (!initPort) throw new Error('env worker must run in a worker thread');

/** Posts a reply on the private port and bumps the reply counter that wakes the waiting caller. */
function reply(port: MessagePort, signal: Int32Array, msg: WorkerReply, transfer: ArrayBuffer[] = []): void {
  signalPost(port, signal, SIGNAL_REPLY, msg, transfer);
}

/** An error's message for the user's one line; its stack travels apart, shown only with REWARDSMITH_DEBUG=1. */
const errorReply = (err: unknown): WorkerReply =>
  err instanceof Error ? { type: 'error', message: err.message, stack: err.stack } : { type: 'error', message: String(err) };

function serve(batch: SimBatch, port: MessagePort, signal: Int32Array): void {
  let requestsSeen = 0;
  for (;;) {
    Atomics.wait(signal, SIGNAL_REQUEST, requestsSeen);
    if (Atomics.load(signal, SIGNAL_REQUEST) === requestsSeen) continue;
    requestsSeen++;
    const msg = receiveMessageOnPort(port)?.message as WorkerRequest | undefined;
    let answer: WorkerReply;
    const transfer: ArrayBuffer[] = [];
    try {
      if (!msg) throw new Error('signalled a request but none came');
      if (msg.type === 'reset') {
        const r = batch.reset(msg.seeds);
        answer = { type: 'reset', ...r };
        transfer.push(r.features.buffer as ArrayBuffer);
      } else if (msg.type === 'step') {
        const result = batch.step(msg.actions);
        answer = { type: 'step', result };
        transfer.push(result.features.buffer as ArrayBuffer);
      } else if (msg.type === 'close') {
        answer = { type: 'closed' };
      } else {
        throw new Error(`unexpected request "${msg.type}"`);
      }
    } catch (err) {
      answer = errorReply(err);
    }
    reply(port, signal, answer, transfer);
    if (answer.type === 'closed') {
      port.close();
      return;
    }
  }
}

initPort.once('message', (msg: WorkerRequest) => {
  if (msg.type !== 'init') throw new Error(`"${msg.type}" before init`);
  const signal = new Int32Array(msg.signal);
  let batch: SimBatch;
  try {
    batch = new SimBatch(msg.task, msg.count, msg.firstIndex);
  } catch (err) {
    reply(msg.port, signal, errorReply(err));
    return;
  }
  reply(msg.port, signal, { type: 'ready', featureSize: batch.featureSize });
  serve(batch, msg.port, signal);
});
