// Worker-thread entry (bundled to dist/env-worker.js; run from source under tsx in tests): steps one shard
// of simulated environments for SimVecEnv. Features travel back as transferred buffers.
import { parentPort } from 'node:worker_threads';
import { SimBatch, type WorkerReply, type WorkerRequest } from './sim/vec';

const port = parentPort;
if (!port) throw new Error('env worker must run in a worker thread');
let batch: SimBatch | null = null;

port.on('message', (msg: WorkerRequest) => {
  let reply: WorkerReply;
  const transfer: ArrayBuffer[] = [];
  try {
    if (msg.type === 'init') {
      batch = new SimBatch(msg.task, msg.count, msg.firstIndex);
      reply = { type: 'ready', featureSize: batch.featureSize };
    } else if (!batch) {
      throw new Error(`"${msg.type}" before init`);
    } else if (msg.type === 'reset') {
      const r = batch.reset(msg.seeds);
      reply = { type: 'reset', ...r };
      transfer.push(r.features.buffer as ArrayBuffer);
    } else {
      const result = batch.step(msg.actions);
      reply = { type: 'step', result };
      transfer.push(result.features.buffer as ArrayBuffer);
    }
  } catch (err) {
    reply = { type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
  port.postMessage(reply, transfer);
});
