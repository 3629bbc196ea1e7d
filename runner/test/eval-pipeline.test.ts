// The held-out evaluation pipelined over two parts of the envs (the worker thread steps one part while the
// calling thread rewards, records and acts for the other) records exactly what whole steps record: the same
// episodes, numbered in the same order, from the same action draws, rewards and holds.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createEnv } from '../src/env/index';
import { HOLD_ACTION, splitStepOf } from '../src/env/types';
import { ensureBackend } from '../src/ppo/backend';
import { FusedActorCritic } from '../src/ppo/fused';
import { engineOf, loadNetwork, newNetwork } from '../src/ppo/learner';
import { Rng, sampleActions } from '../src/ppo/policy';
import { pretrain } from '../src/pretrain/pretrain';
import { RUN_FILES } from '../src/records';
import { RewardSandbox } from '../src/reward/index';
import { evalStreamSeed, evaluate, sampledActions, type EvaluateOptions } from '../src/runs/evaluate';
import { nextEpisodeSeed } from '../src/seeds';
import { GAME_FACTS } from '../src/schema';
import { BUILTIN_TASKS, type TaskSpec } from '../src/tasks';

const REWARD = path.resolve(__dirname, '../rewards/approach-tree.dense.reward.ts');
/**
 * A short task on approach-tree's plains: come within 3 blocks of a flower in 60 steps. Many episodes end at the
 * limit, in the same step for every env that started together; the others when the walker comes near a flower.
 */
const task: TaskSpec = {
  ...BUILTIN_TASKS['approach-tree']!,
  id: 'approach-flower',
  maxSteps: 60,
  success: { kind: 'near', names: ['poppy', 'dandelion', 'cornflower'], distance: 3 },
};
const NUM_ACTIONS = GAME_FACTS.actions.length;
const FORWARD = GAME_FACTS.actions.indexOf('forward'),
  TURN_LEFT = GAME_FACTS.actions.indexOf('turn_left'),
  TURN_RIGHT = GAME_FACTS.actions.indexOf('turn_right');

/**
 * A row-wise policy with one random stream over the batch (as sampledActions draws): mostly forward, sometimes a
 * turn, and a row's draw depends on its features too, so that a row acted on with another's features or draw
 * plays differently.
 */
function walker(seed: number, featureSize: number, sizes: number[]): EvaluateOptions['act'] {
  const rng = new Rng(seed);
  return (features, n) => {
    sizes.push(n);
    return Int32Array.from({ length: n }, (_, i) => {
      let sum = 0;
      for (let j = 0; j < featureSize; j += 7) sum += features[i * featureSize + j]!;
      const u = (rng.next() + Math.abs(sum) * 1e-3) % 1;
      return u < 0.75 ? FORWARD : u < 0.875 ? TURN_LEFT : u < 0.97 ? TURN_RIGHT : Math.floor(u * 1000) % NUM_ACTIONS;
    });
  };
}

/** World `k` (0 = the first) of env i's evaluation stream for seed 11. */
const world = (i: number, k: number): number => (k === 0 ? evalStreamSeed(11, i) : nextEpisodeSeed(world(i, k - 1), i));
/**
 * Training worlds in the evaluation's seed streams: not counted, but played (stepped, not held) by envs whose
 * counted episodes are still to start: env 3's second world, and envs 0 and 1 from their third on, so that they
 * still play when the worker's envs end the last counted episodes.
 */
const TRAINED = new Set([world(3, 1), ...[0, 1].flatMap((i) => [2, 3, 4, 5].map((k) => world(i, k)))]);

async function featureSize(): Promise<number> {
  const env = await createEnv({ task, numEnvs: 1, seed: 0, workers: 0 });
  await env.close();
  return env.featureSize;
}

/** One evaluation of 13 episodes on 5 envs, whole steps (no worker) or pipelined (one worker), with the real reward. */
async function run(workers: 0 | 1, act: (sizes: number[]) => EvaluateOptions['act']) {
  const sizes: number[] = [];
  const sandbox = await RewardSandbox.open(REWARD, 5, { attack: false, episodeSteps: task.maxSteps });
  // What the reward host is asked, in order: each reward call's env, and each episode begun ('begin N').
  const calls: (number | string)[] = [];
  const { step, stepEnvs, beginEpisodes } = sandbox;
  sandbox.step = (obs) => (calls.push(...obs.map((_, i) => i)), step.call(sandbox, obs));
  sandbox.stepEnvs = (envs, obs) => (calls.push(...envs), stepEnvs.call(sandbox, envs, obs));
  sandbox.beginEpisodes = (envs, obs) => (calls.push(...envs.map((e) => `begin ${e}`)), beginEpisodes.call(sandbox, envs, obs));
  try {
    const failed: number[] = [];
    const progress: number[] = [];
    const result = await evaluate({
      task,
      episodes: 13,
      numEnvs: 5,
      seed: 11,
      trainingSeeds: TRAINED,
      act: act(sizes),
      rowwiseAct: true,
      sandbox,
      workers,
      emit: (e) => {
        if (e.type === 'episode_failed') failed.push(e.episode);
      },
      onEpisode: (done) => progress.push(done),
    });
    return { ...result, sizes, failed, progress, calls };
  } finally {
    await sandbox.close();
  }
}

test('a pipelined evaluation records the episodes whole steps record, byte for byte (held envs, same-step and staggered ends)', async () => {
  const size = await featureSize();
  const plain = await run(0, (sizes) => walker(5, size, sizes));
  const piped = await run(1, (sizes) => walker(5, size, sizes));
  assert.ok(
    plain.sizes.every((n) => n === 5),
    'whole steps act for all 5 envs at once',
  );
  assert.deepEqual([...new Set(piped.sizes)].sort(), [2, 3], 'the pipelined evaluation acts for its two parts (2 envs here, 3 in the worker)');
  assert.equal(JSON.stringify(piped.episodes), JSON.stringify(plain.episodes));
  assert.equal(piped.frames, plain.frames);
  assert.deepEqual(piped.summary, plain.summary);
  assert.deepEqual(piped.failed, plain.failed, 'the same failed episodes, reported in the same order');
  assert.deepEqual(piped.progress, plain.progress);
  assert.deepEqual(piped.calls, plain.calls, 'the reward host gets the same calls and begins, in the same order');
  // What the case covers: episodes numbered across both parts in one step (the time limit ends every env's first
  // episode in step 60), episodes that end earlier, uncounted episodes on training worlds, and envs held after the
  // last counted episode started.
  const steps = new Set(plain.episodes.map((e) => e.steps));
  assert.ok(steps.has(60) && steps.size > 1, `episodes end at the limit and before it: ${[...steps]}`);
  assert.ok(
    plain.episodes.some((e) => e.success),
    'some episodes reach a flower',
  );
  assert.ok(plain.episodes.every((e) => !TRAINED.has(e.seed)));
  assert.ok(plain.frames < plain.sizes.length * 5, `some envs were held: ${plain.frames} frames in ${plain.sizes.length} steps of 5 envs`);
});

test('a pipelined evaluation of a fused network (sampledActions) records what whole steps record', async () => {
  const backend = await ensureBackend('js');
  const config = { featureSize: await featureSize(), numActions: NUM_ACTIONS, hidden: [16, 16] };
  const policy = (sizes: number[]) => {
    const net = newNetwork(engineOf(backend), config, new Rng(3));
    assert.equal(net.rowsIndependent, true);
    const act = sampledActions(net, NUM_ACTIONS, 11);
    return (features: Float32Array, n: number) => {
      sizes.push(n);
      return act(features, n);
    };
  };
  const plain = await run(0, policy);
  const piped = await run(1, policy);
  assert.ok(piped.sizes.includes(2) && !piped.sizes.includes(5), 'pipelined');
  assert.equal(JSON.stringify(piped.episodes), JSON.stringify(plain.episodes));
  assert.equal(piped.frames, plain.frames);
});

test("sampledActions leaves held envs' rows out of the fused network's forward pass and records what acting for them records", async () => {
  const backend = await ensureBackend('js');
  const config = { featureSize: await featureSize(), numActions: NUM_ACTIONS, hidden: [16, 16] };
  const rowsEvaluated: number[] = [];
  const policy = (passHeld: boolean) => (sizes: number[]) => {
    const net = newNetwork(engineOf(backend), config, new Rng(3));
    const actionProbs = net.actionProbs.bind(net);
    net.actionProbs = (features, batch) => (passHeld && rowsEvaluated.push(batch), actionProbs(features, batch));
    const act = sampledActions(net, NUM_ACTIONS, 11);
    return (features: Float32Array, n: number, held?: Uint8Array) => {
      sizes.push(n);
      return act(features, n, passHeld ? held : undefined);
    };
  };
  for (const workers of [0, 1] as const) {
    rowsEvaluated.length = 0;
    const all = await run(workers, policy(false));
    const skipping = await run(workers, policy(true));
    assert.equal(JSON.stringify(skipping.episodes), JSON.stringify(all.episodes));
    assert.deepEqual(skipping.calls, all.calls);
    const evaluated = rowsEvaluated.reduce((a, b) => a + b, 0),
      acted = skipping.sizes.reduce((a, b) => a + b, 0);
    assert.ok(
      evaluated > 0 && evaluated < acted,
      `acting evaluates the policy head (actionProbs), held rows left out (${workers} workers): ${evaluated} of ${acted} rows`,
    );
  }
});

test('pretrain evaluates its foundation as eval does (pipelined, held rows out of the forward pass) and records what whole steps acting for every row record', async () => {
  const out = mkdtempSync(path.join(tmpdir(), 'pretrain-eval-'));
  // The batches the fused network evaluates once the foundation's evaluation has begun.
  const batches: number[] = [];
  let evaluating = false;
  const { actionProbs: forward } = FusedActorCritic.prototype;
  FusedActorCritic.prototype.actionProbs = function (this: FusedActorCritic, features: Float32Array, batch: number) {
    if (evaluating) batches.push(batch);
    return forward.call(this, features, batch);
  };
  try {
    const shortTask = { ...BUILTIN_TASKS['approach-tree']!, maxSteps: 120 };
    const options = { task: shortTask, out, demos: 2, epochs: 2, seed: 3, evalEpisodes: 8, evalEnvs: 6, workers: 1, backend: 'js' as const };
    await pretrain({ ...options, onEvalEpisode: () => (evaluating = true) });
    evaluating = false;
    assert.ok(batches.length > 0);
    assert.ok(
      batches.every((n) => n <= 3),
      `acted for in two parts of 3 envs, never for all 6 at once: ${[...new Set(batches)]}`,
    );
    assert.ok(
      batches.some((n) => n < 3),
      `held envs left out of the forward pass: ${[...new Set(batches)]}`,
    );
    // What the evaluation recorded before: whole steps, the network run on every row, one draw per row in env order.
    const backend = await ensureBackend('js');
    const loaded = loadNetwork(path.join(out, RUN_FILES.checkpoint), engineOf(backend));
    const rng = new Rng(3 ^ 0xe7a1);
    const whole = await evaluate({
      task: shortTask,
      episodes: 8,
      numEnvs: 6,
      seed: 3,
      sandbox: null,
      workers: 0,
      trainingSeeds: new Set(loaded.file.worldSeeds),
      act: (features, n) => sampleActions(loaded.net.evaluate(features, n).probs, n, NUM_ACTIONS, rng),
    });
    loaded.net.dispose();
    // The clone fails all 8 (120 steps each): 6 episodes, then 2 more on envs 0 and 1 while envs 2-5 are held.
    assert.equal(whole.episodes.length, 8);
    const recorded = readFileSync(path.join(out, RUN_FILES.episodes), 'utf8');
    assert.equal(recorded, whole.episodes.map((e) => JSON.stringify(e) + '\n').join(''));
  } finally {
    FusedActorCritic.prototype.actionProbs = forward;
    rmSync(out, { recursive: true, force: true });
  }
});

test("the fused network's outputs for a batch's rows are the same bits when the rows come in slices, and actionProbs gives evaluate's probabilities", async () => {
  const env = await createEnv({ task, numEnvs: 25, seed: 9, workers: 0 });
  try {
    let { features } = await env.reset(Array.from({ length: 25 }, (_, i) => 100 + i));
    // Features of worlds some steps in (nearest things seen, motion, last action), not just the first frame.
    for (let t = 0; t < 20; t++) features = (await env.step(Int32Array.from({ length: 25 }, (_, i) => (t * 3 + i) % NUM_ACTIONS))).features;
    const f = env.featureSize;
    const config = { featureSize: f, numActions: NUM_ACTIONS, hidden: [64, 64] };
    const whole = new FusedActorCritic(config, new Rng(4)).evaluate(features, 25);
    // A fresh network whose first batch is the small one (its workspace sized to it), and one that has seen the whole batch.
    const fresh = new FusedActorCritic(config, new Rng(4));
    const used = new FusedActorCritic(config, new Rng(4));
    used.evaluate(features, 25);
    for (const net of [fresh, used]) {
      const low = net.evaluate(features.subarray(0, 10 * f), 10);
      const high = net.evaluate(features.subarray(10 * f), 15);
      assert.deepEqual(new Uint32Array(Float32Array.from([...low.probs, ...high.probs]).buffer), new Uint32Array(whole.probs.buffer));
      assert.deepEqual(new Uint32Array(Float32Array.from([...low.values, ...high.values]).buffer), new Uint32Array(whole.values.buffer));
      // Acting's probabilities without the value head: the same bits, whole or in slices.
      const lowActs = net.actionProbs(features.subarray(0, 10 * f), 10);
      assert.deepEqual(
        new Uint32Array(Float32Array.from([...lowActs, ...net.actionProbs(features.subarray(10 * f), 15)]).buffer),
        new Uint32Array(whole.probs.buffer),
      );
      assert.deepEqual(new Uint32Array(net.actionProbs(features, 25).buffer), new Uint32Array(whole.probs.buffer));
    }
  } finally {
    await env.close();
  }
});

test('a split step gives each env what a whole step gives it, and an env closed between the halves closes cleanly', async () => {
  const seeds = Array.from({ length: 7 }, (_, i) => 50 + i);
  const whole = await createEnv({ task, numEnvs: 7, seed: 0, workers: 0 });
  const env = await createEnv({ task, numEnvs: 7, seed: 0, workers: 1, callerWork: 0.15 });
  const split = splitStepOf(env)!;
  try {
    assert.equal(splitStepOf(whole), null, 'an env without a worker is stepped whole');
    assert.equal(split.localEnvs, 3);
    assert.deepEqual((await split.reset(seeds)).obs, (await whole.reset(seeds)).obs);
    for (let t = 0; t < 70; t++) {
      const actions = Int32Array.from({ length: 7 }, (_, i) => (t > 40 && i === 5 ? HOLD_ACTION : (t * 5 + i * 3) % NUM_ACTIONS));
      split.startRemoteStep(actions.slice(3));
      const local = split.stepLocal(actions.slice(0, 3));
      const remote = await split.finishRemoteStep();
      const expected = await whole.step(actions);
      assert.deepEqual([...local.obs, ...remote.obs], expected.obs, `step ${t}`);
      assert.deepEqual([...local.info, ...remote.info], expected.info);
      assert.deepEqual([...local.resetObs, ...remote.resetObs], expected.resetObs);
      assert.deepEqual(Float32Array.from([...local.features, ...remote.features]), expected.features);
    }
    split.startRemoteStep(new Int32Array(4));
    assert.throws(() => split.startRemoteStep(new Int32Array(4)), /a remote step is already running/);
  } finally {
    await env.close();
    await whole.close();
  }
});
