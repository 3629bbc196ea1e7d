// Worker-thread entry (bundled to dist/env-worker.js; run from source under tsx in tests): steps one shard
// of simulated environments for SimVecEnv. The first message (init) brings a private MessagePort and a shared
// signal; from then on the worker serves requests in threads.ts's blocking loop (ShardWorker in sim/vec.ts is the
// other side). Features travel back as transferred buffers.
import { type MessagePort, parentPort } from 'node:worker_threads';
import { errorReply, serveRequests, SIGNAL_REPLY, signalPost } from '../threads';
import { SimBatch, type WorkerReply, type WorkerRequest } from './sim/vec';

const initPort = parentPort;
if (!initPort) throw new Error('env worker must run in a worker thread');

function serve(batch: SimBatch, port: MessagePort, signal: Int32Array): void {
  serveRequests<WorkerRequest, WorkerReply>(port, signal, (msg) => {
    if (msg.type === 'reset') {
      const r = batch.reset(msg.seeds);
      return { reply: { type: 'reset', ...r }, transfer: [r.features.buffer as ArrayBuffer] };
    }
    if (msg.type === 'step') {
      const result = batch.step(msg.actions);
      return { reply: { type: 'step', result }, transfer: [result.features.buffer as ArrayBuffer] };
    }
    if (msg.type === 'close') return { reply: { type: 'closed' } };
    throw new Error(`unexpected request "${msg.type}"`);
  });
}

initPort.once('message', (msg: WorkerRequest) => {
  if (msg.type !== 'init') throw new Error(`"${msg.type}" before init`);
  const signal = new Int32Array(msg.signal);
  let batch: SimBatch;
  try {
    batch = new SimBatch(msg.task, msg.count, msg.firstIndex);
  } catch (err) {
    signalPost(msg.port, signal, SIGNAL_REPLY, errorReply(err));
    return;
  }
  signalPost(msg.port, signal, SIGNAL_REPLY, { type: 'ready', featureSize: batch.featureSize } satisfies WorkerReply);
  serve(batch, msg.port, signal);
});
