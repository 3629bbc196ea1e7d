// Episode playback of a 2,000-step episode (approach-tree's limit; explore-diamond for the underground): a
// random-policy episode recorded by the episode recorder, then
//  1. re-simulation alone (the timeline, no frames);
//  2. re-simulation with frames at the report's cap (300), the CLI's default cap (500) and every step (2,000);
//  3. encoding the frames: the report's stacked palette PNG and the GIF (gifenc).
// CPU time of this process (single thread: playback runs on the calling thread), best of 3 (of 1 for every
// step), with the load average beside it.
import { loadavg } from 'node:os';
import { GAME_FACTS } from '../src/schema';
import { BUILTIN_TASKS, type TaskSpec } from '../src/tasks';
import { SimEnv } from '../src/env/sim/sim';
import { EpisodeRecorder } from '../src/runs/recorder';
import type { EpisodeRecord } from '../src/records';
import { replayEpisode } from '../src/playback/replay';
import { framesPng, playbackGif } from '../src/playback/encode';
import { REPORT_PLAYBACK } from '../src/report/playback';

const STEPS = 2000;

/** A random-policy episode that runs the whole 2,000 steps (seeds are tried until one does). */
function recordEpisode(task: TaskSpec): EpisodeRecord {
  for (let seed = 1; ; seed++) {
    const env = new SimEnv(task);
    const features = new Float32Array(env.featureSize);
    const recorder = new EpisodeRecorder('reward_function');
    recorder.begin(0, seed, 0, env.reset(seed, features, 0));
    let s = seed;
    for (;;) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const action = (s >>> 16) % GAME_FACTS.actions.length;
      const { obs, info } = env.step(action, features, 0);
      recorder.step(0, action, 0, obs, info);
      if (info.done || info.step >= STEPS) {
        const ep = recorder.finish(0, obs, { ...info, truncated: true })!;
        if (ep.steps === STEPS) return ep;
        break;
      }
    }
  }
}

function cpuMs(body: () => void, runs = 3): number {
  let best = Infinity;
  for (let k = 0; k < runs; k++) {
    const c0 = process.cpuUsage();
    body();
    const c = process.cpuUsage(c0);
    best = Math.min(best, (c.user + c.system) / 1000);
  }
  return best;
}

export async function run(): Promise<void> {
  console.log(`load average ${loadavg()[0]!.toFixed(2)} at start; CPU ms of this process, best of 3 (1 for every step)`);
  for (const id of ['approach-tree', 'explore-diamond']) {
    const task = { ...BUILTIN_TASKS[id]!, maxSteps: STEPS };
    const ep = recordEpisode(task);
    const resim = cpuMs(() => replayEpisode(task, ep, { frames: false }));
    console.log(`${id}, ${STEPS}-step episode (seed ${ep.seed}): re-simulation alone ${resim.toFixed(0)} ms`);
    for (const maxFrames of [REPORT_PLAYBACK.maxFrames, 500, STEPS]) {
      let frames = 0;
      const ms = cpuMs(
        () => {
          frames = replayEpisode(task, ep, { maxFrames }).frames.length;
        },
        maxFrames > 500 ? 1 : 3,
      );
      console.log(`  with ${frames} frames (cap ${maxFrames}): ${ms.toFixed(0)} ms, ${((ms - resim) / frames).toFixed(2)} ms per frame`);
    }
    const p = replayEpisode(task, ep, { maxFrames: REPORT_PLAYBACK.maxFrames });
    let png = 0,
      gif = 0;
    const pngMs = cpuMs(() => {
      png = framesPng(p).length;
    });
    const gifMs = cpuMs(() => {
      gif = playbackGif(p).length;
    });
    console.log(
      `  encoding ${p.frames.length} frames: PNG ${pngMs.toFixed(0)} ms (${(png / 1024).toFixed(0)} KiB, ${((png * 4) / 3 / 1024).toFixed(0)} KiB as base64 in the page), GIF ${gifMs.toFixed(0)} ms (${(gif / 1024).toFixed(0)} KiB)`,
    );
  }
  console.log(`load average ${loadavg()[0]!.toFixed(2)} at the end`);
}
