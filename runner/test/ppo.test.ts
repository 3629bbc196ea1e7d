// PPO trainer: backend fallback, learning on the dense example reward, reward errors located in the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { train, loadPolicy, DEFAULT_ROLLOUT_STEPS } from '../src/runs/train';
import { createEnv } from '../src/env/index';
import { resolveTask } from '../src/tasks';
import { RewardSandbox } from '../src/reward/index';
import { GAME_FACTS } from '../src/schema';
import { RolloutBuffer } from '../src/ppo/ppo';
import { parseEvent, type RunnerEvent } from '../src/events';
import { cliNodeArgs } from './helpers/cli-process';
import { tempDir } from './helpers/tmp';

const ROOT = path.resolve(__dirname, '../..');
const DENSE_TREE = path.join(ROOT, 'runner/rewards/approach-tree.dense.reward.ts');
const tmp = () => tempDir('rewardsmith-ppo-');

function runBackendProbe(choice: string, env: NodeJS.ProcessEnv = {}): { ok: boolean; out: string } {
  const probe = path.join(ROOT, 'runner/test/fixtures/ppo/backend-probe.ts');
  const r = spawnSync(process.execPath, ['--import', 'tsx', probe, choice], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  return { ok: !line.includes('"error"'), out: line };
}

const installed = (pkg: string) => {
  try {
    createRequire(__filename).resolve(pkg);
    return true;
  } catch {
    return false;
  }
};

test('auto backend falls back past the absent native backends to the fused JS network; named backends fail clearly', {
  skip: installed('@tensorflow/tfjs-node') || installed('@tensorflow/tfjs-node-gpu') ? 'a native backend is installed here' : false,
}, () => {
  const auto = JSON.parse(runBackendProbe('auto').out) as { name: string; skipped: { name: string; reason: string }[] };
  assert.equal(auto.name, 'js');
  assert.deepEqual(
    auto.skipped.map((s) => s.name),
    ['gpu', 'node'],
  );
  assert.match(auto.skipped[0]!.reason, /Cannot find module '@tensorflow\/tfjs-node-gpu'/);

  // TensorFlow.js on wasm stays available by name (the reference the fused network is tested against).
  assert.equal((JSON.parse(runBackendProbe('wasm').out) as { name: string }).name, 'wasm');
  // Asking for a backend explicitly is a promise: it fails clearly instead of silently running elsewhere.
  const noWasm = runBackendProbe('wasm', { REWARDSMITH_WASM_DIR: path.join(tmp(), 'missing') });
  assert.equal(noWasm.ok, false);
  assert.match(noWasm.out, /backend \\?"wasm\\?" is not usable/);
  const node = runBackendProbe('node');
  assert.equal(node.ok, false);
  assert.match(node.out, /backend \\?"node\\?" is not usable: Cannot find module '@tensorflow\/tfjs-node'/);
});

/** Mean per-step reward of a policy over fixed worlds, with the reward in its sandbox. */
async function meanStepReward(act: (features: Float32Array, n: number) => Int32Array, numEnvs: number, steps: number): Promise<number> {
  const task = resolveTask('approach-tree');
  const env = await createEnv({ task, numEnvs, seed: 991, workers: 0 });
  const sandbox = await RewardSandbox.open(DENSE_TREE, numEnvs);
  try {
    const seeds = Array.from({ length: numEnvs }, (_, i) => 50_000 + i);
    const reset = await env.reset(seeds);
    await sandbox.beginEpisodes(
      seeds.map((_, i) => i),
      reset.obs,
    );
    let features = reset.features,
      total = 0;
    for (let t = 0; t < steps; t++) {
      const res = await env.step(act(features, numEnvs));
      const rewards = await sandbox.step(res.obs);
      for (const r of rewards) total += r;
      const done = res.info.flatMap((info, i) => (info.done ? [i] : []));
      await sandbox.beginEpisodes(
        done,
        done.map((i) => res.resetObs[i]!),
      );
      features = res.features;
    }
    return total / (numEnvs * steps);
  } finally {
    await env.close();
    await sandbox.close();
  }
}

test('a short training run on the dense tree reward earns more reward than a random policy', { timeout: 300_000 }, async () => {
  const out = path.join(tmp(), 'run');
  const summary = await train({ rewardFile: DENSE_TREE, task: 'approach-tree', steps: 32_768, envs: 16, seed: 3, out, workers: 0, evalEpisodes: 0 });
  assert.equal(summary.env_steps, 32_768);
  assert.equal(summary.train.updates, 32_768 / (16 * DEFAULT_ROLLOUT_STEPS));

  const policy = await loadPolicy(out, { seed: 1 });
  let state = 12345;
  const random = (_f: Float32Array, n: number) =>
    Int32Array.from({ length: n }, () => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state % GAME_FACTS.actions.length;
    });
  const trained = await meanStepReward((f, n) => policy.act(f, n), 16, 300);
  const baseline = await meanStepReward(random, 16, 300);
  policy.dispose();
  assert.ok(trained > baseline + 0.01, `trained policy ${trained.toFixed(4)} per step vs random ${baseline.toFixed(4)}`);
});

async function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = await cliNodeArgs();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cli, ...args], { cwd: ROOT });
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('a reward that throws mid-run stops training with its original line, on stderr and as a reward_error event', { timeout: 300_000 }, async () => {
  const reward = path.join(ROOT, 'runner/test/fixtures/ppo/late-typo.reward.ts');
  const out = path.join(tmp(), 'run');
  // The check before training would refuse this reward (probe-throws at step 21); --no-check trains it, to see
  // what training does with a reward that fails mid-run.
  const events = await runCli([
    'train',
    reward,
    '--no-check',
    '--task',
    'approach-tree',
    '--steps',
    '4096',
    '--envs',
    '4',
    '--workers',
    '0',
    '--out',
    out,
    '--events',
    'ndjson',
  ]);
  assert.equal(events.code, 1);
  const parsed = events.stdout
    .split('\n')
    .map(parseEvent)
    .filter((e): e is RunnerEvent => e !== undefined);
  const error = parsed.find((e) => e.type === 'reward_error');
  assert.ok(error && error.type === 'reward_error', events.stdout + events.stderr);
  assert.equal(error.line, 9); // `origin[0]` on the undefined memory key
  assert.equal(path.basename(error.file), 'late-typo.reward.ts');
  assert.match(error.message, /undefined/);
  const finished = parsed[parsed.length - 1]!;
  assert.equal(finished.type, 'finished');
  assert.equal(finished.type === 'finished' && finished.ok, false);
  assert.match(events.stderr, /late-typo\.reward\.ts:9:\d+: .*undefined/);

  // Without --events, the human form says the same on stderr.
  const human = await runCli([
    'train',
    reward,
    '--no-check',
    '--task',
    'approach-tree',
    '--steps',
    '4096',
    '--envs',
    '4',
    '--workers',
    '0',
    '--out',
    path.join(tmp(), 'run'),
  ]);
  assert.equal(human.code, 1);
  assert.match(human.stderr, /reward error \(throw\) at .*late-typo\.reward\.ts:9:\d+: .*undefined/);
});

test('a time-limit cut is worth the value of the state it stood in; a success or a death is worth nothing after', () => {
  // One env, three steps: the first ends by the time limit, the second by a death, the third goes on.
  const buffer = new RolloutBuffer(3, 1, 1);
  buffer.length = 3;
  buffer.values.set([0.5, 0.25, 0.75]);
  buffer.rewards.set([1, 2, 4]);
  buffer.dones.set([1, 1, 0]);
  buffer.truncated.set([1, 0, 0]);
  buffer.truncatedValues.set([3, 0, 0]);
  const gamma = 0.9;
  buffer.computeAdvantages(Float32Array.of(10), 0.5, gamma, 0.95);
  assert.ok(Math.abs(buffer.advantages[0]! - (1 * 0.5 + gamma * 3 - 0.5)) < 1e-6, 'the cut step bootstraps from its own last state');
  assert.ok(Math.abs(buffer.advantages[1]! - (2 * 0.5 - 0.25)) < 1e-6, 'a death ends the return');
  assert.ok(Math.abs(buffer.advantages[2]! - (4 * 0.5 + gamma * 10 - 0.75)) < 1e-6, 'a running episode bootstraps from the next state');
});

test('an env cut by the time limit hands back the features of its last state, not of the next episode', async () => {
  const task = { ...resolveTask('approach-tree'), maxSteps: 3 };
  for (const workers of [0, 1]) {
    const env = await createEnv({ task, numEnvs: 2, seed: 5, workers });
    try {
      await env.reset([11, 12]);
      const noOp = new Int32Array(2);
      let res = await env.step(noOp);
      assert.deepEqual(res.terminalFeatures, [null, null], 'no cut before the limit');
      res = await env.step(noOp);
      const beforeCut = res.features.slice();
      res = await env.step(noOp);
      assert.ok(
        res.info.every((i) => i.done && i.truncated),
        'the third step hits the limit',
      );
      for (let i = 0; i < 2; i++) {
        const last = res.terminalFeatures[i]!;
        const f = env.featureSize;
        assert.equal(last.length, f);
        // Standing still, the last state looks like the one before it, and unlike the fresh world reset into.
        assert.deepEqual(Array.from(last), Array.from(beforeCut.subarray(i * f, (i + 1) * f)), `env ${i} (workers ${workers})`);
        assert.notDeepEqual(Array.from(last), Array.from(res.features.subarray(i * f, (i + 1) * f)), `env ${i} (workers ${workers})`);
      }
    } finally {
      await env.close();
    }
  }
});
