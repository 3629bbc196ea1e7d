// Worker-thread entry (bundled to dist/env-worker.js; run from source under tsx in tests): steps one shard
// of simulated environments for SimVecEnv. The first message (init) brings a private MessagePort and a shared
// signal; from then on the worker serves requests in a blocking loop (see ShardWorker in sim/vec.ts): wait for
// the request counter to move, take the message, reply on the port, bump the reply counter. Features travel
// back as transferred buffers.
import { type MessagePort, parentPort, receiveMessageOnPort } from 'node:worker_threads';
import { SIGNAL_REPLY, SIGNAL_REQUEST, SimBatch, type WorkerReply, type WorkerRequest } from './sim/vec';

const initPort = parentPort;
if (!initPort) throw new Error('env worker must run in a worker thread');

function serve(batch: SimBatch, port: MessagePort, signal: Int32Array): void {
  let requestsSeen = 0;
  for (;;) {
    Atomics.wait(signal, SIGNAL_REQUEST, requestsSeen);
    if (Atomics.load(signal, SIGNAL_REQUEST) === requestsSeen) continue;
    requestsSeen++;
    const msg = receiveMessageOnPort(port)?.message as WorkerRequest | undefined;
    let reply: WorkerReply;
    const transfer: ArrayBuffer[] = [];
    try {
      if (!msg) throw new Error('signalled a request but none came');
      if (msg.type === 'reset') {
        const r = batch.reset(msg.seeds);
        reply = { type: 'reset', ...r };
        transfer.push(r.features.buffer as ArrayBuffer);
      } else if (msg.type === 'step') {
        const result = batch.step(msg.actions);
        reply = { type: 'step', result };
        transfer.push(result.features.buffer as ArrayBuffer);
      } else if (msg.type === 'close') {
        reply = { type: 'closed' };
      } else {
        throw new Error(`unexpected request "${msg.type}"`);
      }
    } catch (err) {
      reply = { type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
    }
    port.postMessage(reply, transfer);
    Atomics.add(signal, SIGNAL_REPLY, 1);
    Atomics.notify(signal, SIGNAL_REPLY);
    if (reply.type === 'closed') {
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
    msg.port.postMessage({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies WorkerReply);
    Atomics.add(signal, SIGNAL_REPLY, 1);
    Atomics.notify(signal, SIGNAL_REPLY);
    return;
  }
  msg.port.postMessage({ type: 'ready', featureSize: batch.featureSize } satisfies WorkerReply);
  Atomics.add(signal, SIGNAL_REPLY, 1);
  Atomics.notify(signal, SIGNAL_REPLY);
  serve(batch, msg.port, signal);
});
