// A run folder with playable episodes, recorded the way a real run records them: `evaluate` (the one
// episode recorder) in the simulator with the reward in its sandbox, a seeded walk-and-turn policy, a task file
// with a short step limit, and the summary a training run writes (no training: playback needs none).
import { copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { evaluate, writeEvalRecords } from '../../src/runs/evaluate';
import { RewardSandbox } from '../../src/reward/index';
import { RUN_FILES, rewardCopyName, type EpisodeRecord, type RunSummary } from '../../src/records';
import { resolveTask } from '../../src/tasks';

export const PLAYBACK_TASK_FILE = path.join(__dirname, '..', 'fixtures', 'short-approach-pig.yaml');
export const PLAYBACK_REWARD = path.join(__dirname, '..', '..', 'rewards', 'approach-pig.dense-sparse.reward.ts');

/** Mostly forward, sometimes turning or jumping: an agent that wanders. Seeded (mulberry32). */
function wander(seed: number) {
  let s = seed | 0;
  const next = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const choices = [5, 5, 5, 5, 6, 3, 4, 3, 4, 1, 2, 11, 0];
  return (_features: Float32Array, n: number) => Int32Array.from({ length: n }, () => choices[Math.floor(next() * choices.length)]!);
}

/** Records `episodes` evaluation episodes of `taskFile` into `dir` (eval/episodes.ndjson, summary.json); returns them. */
export async function recordPlaybackRun(dir: string, episodes = 4, seed = 11, taskFile = PLAYBACK_TASK_FILE): Promise<EpisodeRecord[]> {
  const task = resolveTask(taskFile);
  const sandbox = await RewardSandbox.open(PLAYBACK_REWARD, episodes, { episodeSteps: task.maxSteps });
  try {
    const res = await evaluate({ task, episodes, numEnvs: episodes, seed, trainingSeeds: new Set(), act: wander(seed), sandbox, workers: 0 });
    writeEvalRecords(dir, res.episodes);
    const summary: RunSummary = {
      task: task.id,
      task_file: taskFile,
      reward_file: PLAYBACK_REWARD,
      reward_sha256: null,
      seed,
      env: 'sim',
      env_steps: res.frames,
      wall_seconds: 0,
      backend: 'none (evaluation only)',
      train: {
        updates: 0,
        frames: 0,
        mean_return: 0,
        success_rate: null,
        success: { count: 0, n: 0, rate: null, ci95: [0, 1], started_from_frame: 0, started_to_frame: 0, mean_return: null },
        entropy: 0,
        fps: 0,
      },
      eval: res.summary,
      generalisation_gap: null,
    };
    writeFileSync(path.join(dir, RUN_FILES.summary), `${JSON.stringify(summary, null, 1)}\n`);
    // As train and eval leave it: the reward the records were made with, copied into the run (analyze reads it).
    copyFileSync(PLAYBACK_REWARD, path.join(dir, rewardCopyName(PLAYBACK_REWARD)));
    return res.episodes;
  } finally {
    await sandbox.close();
  }
}
