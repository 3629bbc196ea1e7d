// The fused plain-JS network (runner/src/ppo/fused.ts) against the TensorFlow.js reference it replaces: the same
// initial weights from a seed, the PPO loss and its gradient (TensorFlow.js's autodiff and finite differences),
// Adam, and checkpoints that each engine resumes from the other's. Minibatches are real approach-tree features.
import { test } from 'node:test';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../src/ppo/backend';
import { FusedActorCritic, FusedAdam, fusedPpoUpdate, initPolicyLogProbs, lossWorkspace, ppoLossAndGradient, type LossOptions } from '../src/ppo/fused';
import { createLearner, loadNetwork, restoreOptimizer, saveOptimizer } from '../src/ppo/learner';
import { ValueThread } from '../src/ppo/value-thread';
import { ActorCritic, Rng, sampleActions, savePolicy } from '../src/ppo/policy';
import { DEFAULT_HYPERPARAMETERS, forEachMinibatch, ppoUpdate, RolloutBuffer, tfjsPpoLoss, type Minibatch, type PpoHyperparameters } from '../src/ppo/ppo';
import { createEnv } from '../src/env/index';
import { resolveTask } from '../src/tasks';
import { GAME_FACTS } from '../src/schema';
import { PhaseProfile } from '../src/ppo/profile';
import { tempDir } from './helpers/tmp';

const ENVS = 8,
  STEPS = 32;

/** A filled rollout buffer from real approach-tree worlds, actions from `net`, advantages from made-up rewards. */
async function realBuffer(net: FusedActorCritic, seed: number): Promise<RolloutBuffer> {
  const env = await createEnv({ task: resolveTask('approach-tree'), numEnvs: ENVS, seed, workers: 0 });
  const rng = new Rng(seed);
  const buffer = new RolloutBuffer(STEPS, ENVS, env.featureSize);
  try {
    let { features } = await env.reset(Array.from({ length: ENVS }, (_, i) => seed * 100 + i));
    for (let t = 0; t < STEPS; t++) {
      const { probs, values } = net.evaluate(features, ENVS);
      const actions = sampleActions(probs, ENVS, net.config.numActions, rng);
      buffer.features.set(features, t * ENVS * env.featureSize);
      for (let i = 0; i < ENVS; i++) {
        const k = t * ENVS + i;
        buffer.actions[k] = actions[i]!;
        // The data's policy differs from the current one, so that ratios spread past the clip range.
        buffer.logProbs[k] = Math.log(probs[i * net.config.numActions + actions[i]!]!) + (rng.next() - 0.5) * 0.8;
        buffer.values[k] = values[i]!;
      }
      const res = await env.step(actions);
      for (let i = 0; i < ENVS; i++) {
        buffer.rewards[t * ENVS + i] = rng.normal();
        buffer.dones[t * ENVS + i] = res.info[i]!.done ? 1 : 0;
      }
      buffer.length = t + 1;
      features = res.features;
    }
  } finally {
    await env.close();
  }
  buffer.computeAdvantages(new Float32Array(ENVS), 1, 0.99, 0.95);
  return buffer;
}

function oneMinibatch(buffer: RolloutBuffer, hp: PpoHyperparameters): Minibatch {
  let mb: Minibatch | null = null;
  forEachMinibatch(buffer, { ...hp, epochs: 1, minibatches: 1 }, new Rng(3), (m) => (mb ??= m));
  return mb!;
}

/** The tfjs copy of a fused network (same weights). */
function tfjsCopy(net: FusedActorCritic): ActorCritic {
  const copy = new ActorCritic(net.config, new Rng(0));
  copy.setWeights(net.weights());
  return copy;
}

const config = (featureSize: number) => ({ featureSize, numActions: GAME_FACTS.actions.length, hidden: [64, 64] });

test('one seed gives the same initial weights on both engines, and the same weights.bin layout', async () => {
  await selectBackend('cpu');
  const fused = new FusedActorCritic(config(639), new Rng(0x1417));
  const ref = new ActorCritic(config(639), new Rng(0x1417));
  assert.deepEqual(fused.shapes, ref.shapes);
  assert.deepEqual(fused.weights(), ref.weights());
  ref.dispose();
});

for (const [name, withInit, valueOnly] of [
  ['from scratch', false, false],
  ['with the KL term to an --init policy', true, false],
  ['during value pre-training', true, true],
] as const) {
  test(`the PPO loss gradient matches TensorFlow.js's autodiff (${name})`, async () => {
    await selectBackend('cpu');
    const hp = DEFAULT_HYPERPARAMETERS;
    const net = new FusedActorCritic(config(639), new Rng(11));
    const buffer = await realBuffer(net, 21);
    // Train-like weights: the policy head away from its near-zero start, so every term has a gradient.
    for (const p of net.params) for (let i = 0; i < p.length; i++) p[i] = p[i]! + (Math.sin(i * 12.9898) * 0.05) / Math.sqrt(1 + (i % 7));
    const initNet = withInit ? new FusedActorCritic(config(639), new Rng(12)) : null;
    const mb = oneMinibatch(buffer, hp);
    const opts: LossOptions = { hp, initLogp: initNet && initPolicyLogProbs(initNet, buffer), policyWeight: valueOnly ? 0 : 1 };
    const ws = lossWorkspace(net, mb.size);
    const terms = ppoLossAndGradient(net, mb, opts, ws);
    assert.ok(terms.clipFraction > 0.05 && terms.clipFraction < 0.95, `clip fraction ${terms.clipFraction}: both sides of the clip are exercised`);

    const ref = tfjsCopy(net);
    const refInit = initNet ? tfjsCopy(initNet) : null;
    const { grads, refTerms } = tf.tidy(() => {
      const initLogp = refInit ? tf.logSoftmax(refInit.forward(tf.tensor2d(mb.x, [mb.size, 639])).logits) : null;
      let kept: tf.Scalar[] = [];
      const { grads } = tf.variableGrads(() => {
        const { total, terms } = tfjsPpoLoss(ref, mb, hp, { initLogp, policyWeight: opts.policyWeight });
        kept = terms;
        return total;
      }, ref.variables);
      return { grads: ref.variables.map((v) => grads[v.name]!.dataSync() as Float32Array), refTerms: kept.map((t) => t.dataSync()[0]!) };
    });
    const ours = [terms.policyLoss, terms.valueLoss, terms.entropy, terms.kl, terms.approxKl, terms.clipFraction];
    ours.forEach((v, i) => assert.ok(Math.abs(v - refTerms[i]!) <= 1e-5 * Math.max(1, Math.abs(v)), `loss term ${i}: ${v} vs ${refTerms[i]}`));
    let maxDiff = 0,
      maxAbs = 0;
    grads.forEach((g, k) => {
      for (let i = 0; i < g.length; i++) {
        maxDiff = Math.max(maxDiff, Math.abs(g[i]! - ws.grads[k]![i]!));
        maxAbs = Math.max(maxAbs, Math.abs(g[i]!));
      }
    });
    assert.ok(maxAbs > 1e-3, 'the gradient is not trivially zero');
    assert.ok(maxDiff <= 1e-4 * maxAbs, `largest difference ${maxDiff} against a largest gradient of ${maxAbs}`);
    if (valueOnly) {
      const policyParams = net.policyLayers.length * 2;
      assert.ok(
        ws.grads.slice(0, policyParams).every((g) => g.every((v) => v === 0)),
        'value pre-training leaves the policy untouched',
      );
    }
    ref.dispose();
    refInit?.dispose();
  });
}

test('the PPO loss gradient matches finite differences of the loss', async () => {
  const hp = DEFAULT_HYPERPARAMETERS;
  const net = new FusedActorCritic(config(639), new Rng(31));
  const buffer = await realBuffer(net, 32);
  const initNet = new FusedActorCritic(config(639), new Rng(33));
  const mb = oneMinibatch(buffer, hp);
  const opts: LossOptions = { hp, initLogp: initPolicyLogProbs(initNet, buffer), policyWeight: 1 };
  const ws = lossWorkspace(net, mb.size);
  const total = () => {
    const t = ppoLossAndGradient(net, mb, opts, ws);
    return hp.valueCoef * t.valueLoss + t.policyLoss - hp.entropyCoef * t.entropy + hp.klCoef * t.kl;
  };
  total();
  const analytic = ws.grads.map((g) => Float64Array.from(g));
  const rng = new Rng(34);
  let checked = 0;
  for (let k = 0; k < net.params.length; k++) {
    const p = net.params[k]!;
    // The largest-gradient entry of each variable and a few random ones.
    let best = 0;
    for (let i = 1; i < p.length; i++) if (Math.abs(analytic[k]![i]!) > Math.abs(analytic[k]![best]!)) best = i;
    for (const i of [best, Math.floor(rng.next() * p.length), Math.floor(rng.next() * p.length)]) {
      const h = 1e-3,
        saved = p[i]!;
      p[i] = saved + h;
      const up = total();
      p[i] = saved - h;
      const down = total();
      p[i] = saved;
      const numeric = (up - down) / (Math.fround(saved + h) - Math.fround(saved - h));
      const a = analytic[k]![i]!;
      assert.ok(Math.abs(numeric - a) <= 2e-3 * Math.max(Math.abs(a), 1e-2), `variable ${k}[${i}]: analytic ${a}, numeric ${numeric}`);
      checked++;
    }
  }
  assert.equal(checked, net.params.length * 3);
});

const largestDifference = (a: Float32Array, b: Float32Array) => a.reduce((d, v, i) => Math.max(d, Math.abs(v - b[i]!)), 0);

test('an --init update evaluates the frozen policy once per rollout, and its KL term trains as on TensorFlow.js', async () => {
  await selectBackend('cpu');
  const hp = { ...DEFAULT_HYPERPARAMETERS, epochs: 2, minibatches: 2 };
  const start = new FusedActorCritic(config(639), new Rng(61));
  const buffer = await realBuffer(start, 62);
  const init = new FusedActorCritic(config(639), new Rng(63));
  for (const p of init.params) for (let i = 0; i < p.length; i++) p[i] = p[i]! + Math.sin(i * 7.31) * 0.05;
  init.version++;

  // The log-probabilities computed once per rollout are the frozen policy's own, row by row and to the bit (as
  // acting computes them), over a rollout longer than one pass of them (3 × 256 rows).
  const long = new RolloutBuffer(STEPS * 3, ENVS, 639);
  for (let r = 0; r < 3; r++) long.features.set(buffer.features, r * buffer.features.length);
  long.length = STEPS * 3;
  assert.deepEqual(Float32Array.from(initPolicyLogProbs(init, long), Math.exp), init.evaluate(long.features, ENVS * STEPS * 3).probs);

  // One update, 2 epochs × 2 minibatches: the frozen policy evaluated once, the minibatches' forward passes 4 times.
  const fused = new FusedActorCritic(start.config, new Rng(0));
  fused.setWeights(start.weights());
  const profile = new PhaseProfile();
  const stats = fusedPpoUpdate(fused, new FusedAdam(fused, hp.learningRate), buffer, hp, new Rng(64), { initNet: init, valueOnly: false, profile });
  assert.equal(profile.phases.get('PPO init policy')?.calls, 1);
  assert.equal(profile.phases.get('PPO forward')?.calls, 4);

  // The same update on TensorFlow.js, which evaluates the frozen policy on each minibatch: the same weights and KL.
  const ref = tfjsCopy(start);
  const refInit = tfjsCopy(init);
  const optimizer = tf.train.adam(hp.learningRate);
  const refStats = ppoUpdate(ref, optimizer, buffer, hp, new Rng(64), { initNet: refInit, valueOnly: false });
  assert.ok(Math.abs(stats.kl - refStats.kl) <= 1e-5 * Math.max(1, refStats.kl), `KL ${stats.kl} (fused) vs ${refStats.kl} (tfjs)`);
  const diff = largestDifference(fused.weights(), ref.weights());
  assert.ok(diff < 2e-5, `largest weight difference ${diff} from the TensorFlow.js update`);
  // The KL term moves the weights well past that tolerance (without it: 4e-3), and a KL taken against other rows
  // of the rollout than the minibatch's differs from TensorFlow.js's by about 8 %.
  const withoutKl = new FusedActorCritic(start.config, new Rng(0));
  withoutKl.setWeights(start.weights());
  fusedPpoUpdate(withoutKl, new FusedAdam(withoutKl, hp.learningRate), buffer, hp, new Rng(64), { initNet: null, valueOnly: false });
  assert.ok(largestDifference(withoutKl.weights(), ref.weights()) > 100 * 2e-5);
  ref.dispose();
  refInit.dispose();
  optimizer.dispose();
});

test('a checkpoint resumes on the other engine: weights.bin and Adam state carry over both ways', async () => {
  await selectBackend('cpu');
  const hp = { ...DEFAULT_HYPERPARAMETERS, epochs: 1, minibatches: 2 };
  const start = new FusedActorCritic(config(639), new Rng(41));
  const buffer = await realBuffer(start, 42);
  // Reference: two updates on TensorFlow.js. Then one update on each engine, checkpoint, and the second on the other.
  const run = (engine: 'tfjs' | 'js') => {
    const net = engine === 'js' ? new FusedActorCritic(start.config, new Rng(0)) : new ActorCritic(start.config, new Rng(0));
    net.setWeights(start.weights());
    return createLearner(engine, net, hp.learningRate);
  };
  const reference = run('tfjs');
  reference.update(buffer, hp, new Rng(1), { initNet: null, valueOnly: false });
  reference.update(buffer, hp, new Rng(2), { initNet: null, valueOnly: false });
  const expected = reference.net.weights();
  for (const [first, second] of [
    ['tfjs', 'js'],
    ['js', 'tfjs'],
  ] as const) {
    const a = run(first);
    a.update(buffer, hp, new Rng(1), { initNet: null, valueOnly: false });
    const dir = tempDir('rewardsmith-fused-');
    savePolicy(a.net, dir, 'approach-tree');
    await saveOptimizer(dir, a);
    const b = createLearner(second, loadNetwork(dir, second).net, hp.learningRate);
    await restoreOptimizer(dir, b);
    b.update(buffer, hp, new Rng(2), { initNet: null, valueOnly: false });
    const got = b.net.weights();
    let maxDiff = 0;
    for (let i = 0; i < got.length; i++) maxDiff = Math.max(maxDiff, Math.abs(got[i]! - expected[i]!));
    // Adam's first steps move every weight by about the learning rate (1e-3): a lost moment or step count shows.
    assert.ok(maxDiff < 2e-5, `${first} → ${second}: largest weight difference ${maxDiff} from two TensorFlow.js updates`);
    a.dispose();
    b.dispose();
  }
});

test('acting on fewer envs than the last batch gives each row what a batch of its own gives', async () => {
  const net = new FusedActorCritic(config(639), new Rng(41));
  const buffer = await realBuffer(net, 42);
  const rows = (from: number, count: number) => buffer.features.subarray(from * 639, (from + count) * 639);
  net.evaluate(rows(0, ENVS), ENVS);
  // Episodes ending shrink the batch: 3 rows through the workspace made for ENVS, then on a network that never saw more.
  const shrunk = net.evaluate(rows(ENVS, 3), 3);
  const fresh = new FusedActorCritic(config(639), new Rng(41)).evaluate(rows(ENVS, 3), 3);
  assert.equal(shrunk.values.length, 3);
  assert.deepEqual(shrunk.probs, fresh.probs);
  assert.deepEqual(shrunk.values, fresh.values);
});

test("the value head's share of each minibatch on a thread of its own gives the one-thread update to the bit", async () => {
  const hp = { ...DEFAULT_HYPERPARAMETERS, epochs: 2, minibatches: 4 };
  const start = new FusedActorCritic(config(639), new Rng(71));
  const buffer = await realBuffer(start, 72);
  const init = new FusedActorCritic(start.config, new Rng(73));
  const run = (threads: 'value-thread' | 'one') => {
    const net = new FusedActorCritic(start.config, new Rng(0));
    net.setWeights(start.weights());
    const learner = createLearner('js', net, hp.learningRate, threads);
    const profile = new PhaseProfile();
    // Value pre-training, then updates with and without the KL term: 3 updates × 8 minibatches, Adam in between.
    const stats = [
      learner.update(buffer, hp, new Rng(1), { initNet: null, valueOnly: true, profile }),
      learner.update(buffer, hp, new Rng(2), { initNet: init, valueOnly: false, profile }),
      learner.update(buffer, hp, new Rng(3), { initNet: null, valueOnly: false, profile }),
    ];
    return { learner, stats, profile };
  };
  const threaded = run('value-thread');
  const single = run('one');
  try {
    if (availableParallelism() > 1) assert.equal(threaded.profile.phases.get('PPO value thread (wait)')?.calls, 24, 'every minibatch used the value thread');
    assert.equal(single.profile.phases.get('PPO value thread (wait)'), undefined);
    assert.deepEqual(threaded.stats, single.stats, 'the same losses, value loss included');
    const bits = (w: Float32Array) => new Uint32Array(w.buffer, w.byteOffset, w.length);
    assert.deepEqual(bits(threaded.learner.net.weights()), bits(single.learner.net.weights()));
    const [a, b] = [await threaded.learner.optimizerWeights(), await single.learner.optimizerWeights()];
    assert.deepEqual(
      a.map((w) => bits(w.values)),
      b.map((w) => bits(w.values)),
      "Adam's moments",
    );
  } finally {
    threaded.learner.dispose();
    single.learner.dispose();
  }
});

test('a value worker that does not start leaves the update to this thread, without an error and without waiting past its bound', () => {
  const net = new FusedActorCritic(config(639), new Rng(81));
  const t0 = Date.now();
  // A worker entry that fails to load (a broken install): its 'error' event must not end the process either.
  const thread = ValueThread.start(net, { bundle: 'no-such-value-worker.js', source: path.join(__dirname, 'no-such-value-worker.ts'), startTimeoutMs: 2_000 });
  assert.equal(thread, null);
  assert.ok(Date.now() - t0 < 10_000, `gave up after ${Date.now() - t0} ms`);
});
