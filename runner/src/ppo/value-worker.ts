// Worker-thread entry (bundled to dist/value-worker.js; run from source under tsx in tests): the value head's share
// of each PPO minibatch for value-thread.ts. The first message (init) brings a private port and the signal words;
// then the worker serves requests in a blocking loop (threads.ts's hand-over) until `close`.
import { type MessagePort, parentPort, receiveMessageOnPort } from 'node:worker_threads';
import { SIGNAL_REPLY, SIGNAL_REQUEST, signalPost } from '../threads';
import { type RolloutRows, ValueHeadPass } from './heads';
import { denseViews, type ValueInit, type ValueReply, type ValueRequest, type ValueShared } from './value-thread';

const initPort = parentPort;
if (!initPort) throw new Error('the PPO value worker must run in a worker thread');

function serve(port: MessagePort, signal: Int32Array): void {
  let requestsSeen = 0;
  let shared: ValueShared | null = null;
  let pass: ValueHeadPass | null = null;
  let rollout: RolloutRows | null = null;
  for (;;) {
    Atomics.wait(signal, SIGNAL_REQUEST, requestsSeen);
    if (Atomics.load(signal, SIGNAL_REQUEST) === requestsSeen) continue;
    requestsSeen++;
    const msg = receiveMessageOnPort(port)?.message as ValueRequest | undefined;
    let answer: ValueReply;
    try {
      if (!msg) throw new Error('signalled a request but none came');
      if (msg.type === 'share') {
        shared = msg.shared;
        pass = new ValueHeadPass(denseViews(shared.layers, shared.params), shared.featureSize, shared.rows);
        answer = { type: 'ready' };
      } else if (msg.type === 'rollout') {
        rollout = msg.rollout;
        continue; // no reply: the minibatch that follows answers
      } else if (msg.type === 'minibatch') {
        if (!pass || !shared || !rollout) throw new Error('a minibatch before the shared arrays and the rollout');
        const sum = pass.run(rollout, shared.rowIndex, shared.returns, msg.count, msg.valueCoef);
        let o = 0;
        for (const g of pass.grads) shared.grads.set(g, (o += g.length) - g.length);
        answer = { type: 'done', sum };
      } else if (msg.type === 'close') {
        answer = { type: 'closed' };
      } else {
        throw new Error(`unexpected request "${(msg as { type: string }).type}"`);
      }
    } catch (err) {
      answer = err instanceof Error ? { type: 'error', message: err.message, stack: err.stack } : { type: 'error', message: String(err) };
    }
    signalPost(port, signal, SIGNAL_REPLY, answer);
    if (answer.type === 'closed') {
      port.close();
      return;
    }
  }
}

initPort.once('message', (msg: ValueInit) => {
  if (msg.type !== 'init') throw new Error(`"${(msg as { type: string }).type}" before init`);
  serve(msg.port, new Int32Array(msg.signal));
});
