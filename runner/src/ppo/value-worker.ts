// Worker-thread entry (bundled to dist/value-worker.js; run from source under tsx in tests): the value head's share
// of each PPO minibatch for value-thread.ts. The first message (init) brings a private port and the signal words;
// then the worker serves requests in threads.ts's blocking loop until `close`.
import { type MessagePort, parentPort } from 'node:worker_threads';
import { serveRequests } from '../threads';
import { type RolloutRows, ValueHeadPass } from './heads';
import { denseViews, type ValueInit, type ValueReply, type ValueRequest, type ValueShared } from './value-thread';

const initPort = parentPort;
if (!initPort) throw new Error('the PPO value worker must run in a worker thread');

function serve(port: MessagePort, signal: Int32Array): void {
  let shared: ValueShared | null = null;
  let pass: ValueHeadPass | null = null;
  let rollout: RolloutRows | null = null;
  serveRequests<ValueRequest, ValueReply>(port, signal, (msg) => {
    if (msg.type === 'share') {
      shared = msg.shared;
      pass = new ValueHeadPass(denseViews(shared.layers, shared.params), shared.featureSize, shared.rows);
      return { reply: { type: 'ready' } };
    }
    if (msg.type === 'rollout') {
      rollout = msg.rollout;
      return null; // no reply: the minibatch that follows answers
    }
    if (msg.type === 'minibatch') {
      if (!pass || !shared || !rollout) throw new Error('a minibatch before the shared arrays and the rollout');
      const sum = pass.run(rollout, shared.rowIndex, shared.returns, msg.count, msg.valueCoef);
      let o = 0;
      for (const g of pass.grads) shared.grads.set(g, (o += g.length) - g.length);
      return { reply: { type: 'done', sum } };
    }
    if (msg.type === 'close') return { reply: { type: 'closed' } };
    throw new Error(`unexpected request "${(msg as { type: string }).type}"`);
  });
}

initPort.once('message', (msg: ValueInit) => {
  if (msg.type !== 'init') throw new Error(`"${(msg as { type: string }).type}" before init`);
  serve(msg.port, new Int32Array(msg.signal));
});
