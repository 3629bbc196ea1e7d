// Training episodes shorter than the task's (`train --train-episode-steps N`, or a task's `trainEpisodeSteps`):
// a training episode cut at N is a time-limit cut (bootstrapped from the value of its last state) and the env
// goes on in a fresh world of its seed stream; the held-out evaluation still runs to the task's limit; the limit
// is stored with the run, so a resumed run keeps it and config.json shows it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createEnv } from '../src/env/index';
import { GAME_FACTS } from '../src/schema';
import { RewardSandbox } from '../src/reward/index';
import { Rng } from '../src/ppo/policy';
import { RolloutBuffer } from '../src/ppo/ppo';
import { newNetwork, engineOf } from '../src/ppo/learner';
import { ensureBackend } from '../src/ppo/backend';
import { RolloutCollector } from '../src/runs/collect';
import { trainingStreamSeed } from '../src/runs/evaluate';
import { train } from '../src/runs/train';
import { TrainingSuccess } from '../src/runs/training-success';
import { readCheckpoint, trainingEpisodes, type TrainState } from '../src/runs/run-folder';
import { RUN_FILES, type EpisodeRecord, type RunSummary, type UpdateMetrics } from '../src/records';
import { BUILTIN_TASKS, loadTaskFile, resolveTask } from '../src/tasks';
import { UsageError } from '../src/args';
import { tempDir } from './helpers/tmp';

const ROOT = path.resolve(__dirname, '../..');
const REWARD = path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts');
const dir = tempDir('rewardsmith-train-episodes-');
const metricsOf = (out: string) =>
  readFileSync(path.join(out, RUN_FILES.metrics), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as UpdateMetrics);

test('a training episode cut at N steps is a time-limit cut, bootstrapped from its last state, and the env starts a fresh world', async () => {
  const task = resolveTask('approach-tree');
  const state = { trainEpisodeSteps: 5 } as TrainState;
  const env = await createEnv({ task: trainingEpisodes(task, state), numEnvs: 2, seed: 3, workers: 0 });
  const sandbox = await RewardSandbox.open(REWARD, 2, { attack: false, episodeSteps: 5 });
  const backend = await ensureBackend('js');
  const net = newNetwork(engineOf(backend), { featureSize: env.featureSize, numActions: GAME_FACTS.actions.length, hidden: [8] }, new Rng(1));
  try {
    const first = [trainingStreamSeed(3, 0), trainingStreamSeed(3, 1)];
    const progress = { frames: 0, envSeeds: [...first] };
    const buffer = new RolloutBuffer(12, 2, env.featureSize);
    const collector = await RolloutCollector.start({
      env,
      sandbox,
      net,
      numActions: GAME_FACTS.actions.length,
      rng: new Rng(2),
      buffer,
      progress,
      trainingSeeds: new Set(first),
      successCurve: new TrainingSuccess(2),
      recent: null,
    });
    const rollout = await collector.collect(12);
    // Random actions on approach-tree neither reach a tree nor die in 12 steps: every end is the cut at 5 and 10.
    assert.equal(rollout.finished.length, 4, 'each env ends two episodes in 12 steps');
    for (let t = 0; t < 12; t++) {
      for (let i = 0; i < 2; i++) {
        const cut = t === 4 || t === 9;
        assert.equal(buffer.dones[t * 2 + i], cut ? 1 : 0, `step ${t + 1} env ${i}: done`);
        assert.equal(buffer.truncated[t * 2 + i], cut ? 1 : 0, `step ${t + 1} env ${i}: a time-limit cut, not a death`);
        if (cut) assert.notEqual(buffer.truncatedValues[t * 2 + i], 0, `step ${t + 1} env ${i}: the return past the cut is the last state's value`);
      }
    }
    assert.ok(
      progress.envSeeds.every((s, i) => s !== first[i]),
      'each env went on in a fresh world of its seed stream',
    );
  } finally {
    net.dispose();
    await sandbox.close();
    await env.close();
  }
});

test('train --train-episode-steps: training episodes end at N, held-out episodes run to the task limit, a resumed run keeps N', async () => {
  const out = path.join(dir, 'run');
  const stop = new Error('stopped after update 2');
  const common = { rewardFile: REWARD, task: 'approach-tree', out, envs: 2, workers: 0, backend: 'js' as const, rolloutSteps: 32, checkpointEvery: 1 };
  // Three updates of 2 envs × 32 steps; the first segment stops after the second update's checkpoint.
  await assert.rejects(
    train({
      ...common,
      steps: 192,
      seed: 4,
      trainEpisodeSteps: 16,
      evalEpisodes: 3,
      emit: (e) => {
        if (e.type === 'progress' && e.update === 2) throw stop;
      },
    }),
    stop,
  );
  assert.equal(readCheckpoint(out)?.state.trainEpisodeSteps, 16, 'the checkpoint holds the limit');
  assert.equal(JSON.parse(readFileSync(path.join(out, RUN_FILES.config), 'utf8')).trainEpisodeSteps, 16, 'config.json shows it');
  // Resumed without the option: the run's own limit, not the task's 2,000 steps.
  const summary: RunSummary = await train({ out, resume: true, workers: 0, backend: 'js', evalEpisodes: 3, evalEnvs: 3 });
  const metrics = metricsOf(out);
  assert.deepEqual(
    metrics.map((m) => m.finished_episodes),
    [4, 4, 4],
    'every update (the resumed one too) ends 2 episodes per env: 32 steps at 16 a training episode',
  );
  assert.equal(summary.train.episode_steps, 16);
  const held = readFileSync(path.join(out, RUN_FILES.episodes), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as EpisodeRecord);
  assert.equal(held.length, 3);
  for (const e of held) if (!e.success && !e.died) assert.equal(e.steps, 2000, `held-out episode ${e.episode} runs to approach-tree's limit`);
  assert.ok(
    held.some((e) => e.steps > 16),
    'held-out episodes go past the training limit',
  );
});

test('a training limit longer than the task refuses to start and leaves the run folder as it was', async () => {
  const out = path.join(dir, 'too-long');
  await assert.rejects(
    train({ rewardFile: REWARD, task: 'approach-tree', out, steps: 64, envs: 2, workers: 0, backend: 'js', trainEpisodeSteps: 2001 }),
    (err: unknown) => err instanceof UsageError && /--train-episode-steps 2001 is longer than approach-tree's episodes \(2000 steps\)/.test(err.message),
  );
  assert.equal(existsSync(out), false);
});

test("explore-diamond trains on shorter episodes by default; runs from before the option keep the task's limit", () => {
  const diamond = BUILTIN_TASKS['explore-diamond']!;
  assert.ok(diamond.trainEpisodeSteps! < diamond.maxSteps, 'a training-setup default shorter than the 60,000-step episode');
  assert.equal(trainingEpisodes(diamond, { trainEpisodeSteps: diamond.trainEpisodeSteps } as TrainState).maxSteps, diamond.trainEpisodeSteps);
  assert.equal(trainingEpisodes(diamond, {} as TrainState).maxSteps, 60000, 'a checkpoint without the field trained to the limit');
  assert.equal(BUILTIN_TASKS['approach-tree']!.trainEpisodeSteps, undefined);
  // A task file extending it inherits the limit while it cuts its episodes short, and may set its own.
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  assert.equal(loadTaskFile(file('a.yaml', 'id: my-diamond\nextends: explore-diamond\n')).trainEpisodeSteps, diamond.trainEpisodeSteps);
  assert.equal(loadTaskFile(file('b.yaml', 'id: short\nextends: explore-diamond\nmaxSteps: 500\n')).trainEpisodeSteps, undefined);
  assert.equal(loadTaskFile(file('c.yaml', 'id: mine\nextends: explore-diamond\ntrainEpisodeSteps: 3000\n')).trainEpisodeSteps, 3000);
  assert.throws(
    () => loadTaskFile(file('d.yaml', 'id: bad\nextends: approach-tree\ntrainEpisodeSteps: 5000\n')),
    /d.yaml:3:\d+: trainEpisodeSteps: must be ≤ maxSteps \(2000\), got 5000/,
  );
});
