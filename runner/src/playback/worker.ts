// Worker-thread entry (bundled to dist/replay-worker.js; run from source under tsx in tests): re-simulates
// episodes for playback while the calling thread re-simulates others (replay.ts replayEpisodes). One request,
// one reply on the parent port, the frames' buffers transferred.
import { parentPort } from 'node:worker_threads';
import { answerReplay, type ReplayRequest } from './replay';

const port = parentPort;
if (!port) throw new Error('replay worker must run in a worker thread');
port.once('message', (msg: ReplayRequest) => {
  const { reply, transfer } = answerReplay(msg);
  port.postMessage(reply, transfer);
});
