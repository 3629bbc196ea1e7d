// The reward runtime: compiling reward files (located compile/contract errors), containing hostile code in
// the isolate (right error kind, original line, host survives, re-openable), per-episode state per env,
// the dense/sparse export format, and the bundled example rewards on realistic observation sequences.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { combineScaled, SCALE_RULE } from '../src/schema';
import { BUILTIN_TASKS, successTargets, type TaskSpec } from '../src/tasks';
import type { StepObservation } from '../src/schema';
import {
  compileRewardFile,
  endWarmHosts,
  RewardError,
  RewardSandbox,
  REWARD_LIMITS,
  watchdog,
  historyMb,
  type RewardErrorKind,
  type SandboxOptions,
} from '../src/reward';
import { scriptedTrajectory } from './fixtures/rewards/trajectory';
import { SLOW_STEPS_TO_FAIL } from '../src/reward/protocol';
import { lineOf } from './helpers/source-line';

const FIXTURES = path.join(__dirname, 'fixtures', 'rewards');
const EXAMPLES = path.join(__dirname, '..', 'rewards');
const fixture = (name: string) => path.join(FIXTURES, name);

/** A plain step observation; `stone` at distance k and x = k make each step recognisable to counter.reward.ts. */
function obs(k: number, extra: Partial<StepObservation> = {}): StepObservation {
  return { nearest: { stone: [k, 0, 0.3] }, inventory_change: {}, health: 10, position: [k, 11, 0.5, 0, 0], damage_dealt: 0, kill_entity: {}, ...extra };
}

/** Opens `file`, runs one episode of `steps` steps on `envs` envs, and returns the error it fails with. */
async function failureOf(file: string, opts: SandboxOptions = {}, envs = 1, steps = 3): Promise<RewardError> {
  let sandbox: RewardSandbox | undefined;
  try {
    sandbox = await RewardSandbox.open(file, envs, opts);
    await sandbox.beginEpisodes(
      [...Array(envs).keys()],
      Array.from({ length: envs }, () => obs(0)),
    );
    for (let k = 1; k <= steps; k++) await sandbox.step(Array.from({ length: envs }, () => obs(k)));
  } catch (err) {
    assert.ok(err instanceof RewardError, `expected a RewardError, got ${String(err)}`);
    return err;
  } finally {
    await sandbox?.close();
  }
  assert.fail(`${path.basename(file)} ran without an error`);
}

function assertError(err: RewardError, file: string, kind: RewardErrorKind, message: RegExp, line?: number) {
  assert.equal(err.kind, kind, err.message);
  assert.equal(err.file, file);
  assert.match(err.detail, message);
  if (line !== undefined) assert.equal(err.line, line, err.message);
  assert.ok(err.line >= 1 && err.column >= 1);
  assert.ok(err.message.startsWith(`${file}:${err.line}:${err.column}: `), err.message);
  const json = JSON.parse(JSON.stringify(err)) as Record<string, unknown>;
  assert.deepEqual(Object.keys(json).sort(), ['column', 'env', 'file', 'kind', 'line', 'message']);
}

test('compile: every example reward compiles; the export kind and attack parameters are recognised', () => {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.reward.ts'));
  assert.ok(files.length >= 7);
  for (const f of files) {
    const c = compileRewardFile(path.join(EXAMPLES, f));
    assert.equal(c.exportsKind, f.includes('dense-sparse') ? 'dense_sparse' : 'reward_function', f);
    assert.equal(c.attack, f.startsWith('attack-'), f);
    assert.ok(!/sourceMappingURL/.test(c.js));
    assert.equal(c.map.version, 3);
  }
});

test('compile: JavaScript reward files and arrow-function exports are accepted', () => {
  const js = compileRewardFile(
    '/virtual/plain.reward.js',
    'export const reward_function = (current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) => 0;\n',
  );
  assert.equal(js.exportsKind, 'reward_function');
  assert.deepEqual(js.entries.reward_function, { line: 1, column: 14 });
});

test('compile: syntax errors, wrong parameter order, missing exports and imports are located', () => {
  const cases: [string, RewardErrorKind, RegExp, number][] = [
    ['syntax-error.reward.ts', 'compile', /Expression expected/, 5],
    ['wrong-order.reward.ts', 'contract', /parameter 3 is "health" but must be "inventory_change"/, 2],
    ['no-export.reward.ts', 'contract', /must export function reward_function\(current_nearest_blocks, .*GLOBAL_DATA\)/, 1],
    ['imports.reward.ts', 'contract', /without modules/, 2],
  ];
  for (const [name, kind, message, line] of cases) {
    const file = fixture(name);
    assert.throws(
      () => compileRewardFile(file),
      (err: unknown) => {
        assert.ok(err instanceof RewardError);
        assertError(err, file, kind, message, line);
        return true;
      },
    );
  }
  const err = (() => {
    try {
      compileRewardFile(fixture('wrong-order.reward.ts'));
    } catch (e) {
      return e as RewardError;
    }
  })()!;
  assert.equal(err.column, readFileSync(fixture('wrong-order.reward.ts'), 'utf8').split('\n')[1]!.indexOf('health') + 1, 'points at the misplaced parameter');
  assert.throws(() => compileRewardFile('/v/x.reward.ts', 'export function dense(current_nearest_blocks) { return 0; }'), /exports dense but no sparse/);
  assert.throws(
    () =>
      compileRewardFile(
        '/v/x.reward.ts',
        'export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA, damage_dealt) { return 0; }',
      ),
    /takes 6 or 8 parameters/,
  );
  assert.throws(
    () => compileRewardFile('/v/x.reward.ts', 'export function dense({ cow }) { return 0; }\nexport function sparse() { return 0; }'),
    /must be a plain name/,
  );
});

test('compile: a reward nested 1,000 brackets deep is a located compile error, not a stack overflow', () => {
  const head =
    'export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {\n';
  const deep = `${head}  const x = ${'('.repeat(1000)}health${')'.repeat(1000)};\n  return x;\n}\n`;
  assert.throws(
    () => compileRewardFile('/v/deep.reward.ts', deep),
    (err: unknown) => {
      assert.ok(err instanceof RewardError);
      assertError(err, '/v/deep.reward.ts', 'compile', /brackets nest more than 256 levels deep/, 2);
      assert.equal(err.column, 13 + 255);
      return true;
    },
  );
  const chain = `${head}  let r = 0;\n  if (health < 0) r = 0;\n${Array.from({ length: 5000 }, (_, i) => `  else if (health < ${i}) r = ${i};\n`).join('')}  return r;\n}\n`;
  assert.throws(
    () => compileRewardFile('/v/chain.reward.ts', chain),
    (err: unknown) => err instanceof RewardError && err.kind === 'compile' && /nested too deeply/.test(err.detail),
  );
});

test('hostile and broken rewards are contained with the right error kind, at the original line', async () => {
  const cases: [string, RewardErrorKind, RegExp, string | null][] = [
    ['require-fs.reward.ts', 'throw', /ReferenceError: require is not defined/, "require('fs')"],
    ['escape-constructor.reward.ts', 'throw', /ReferenceError: process is not defined/, "constructor.constructor('return process')"],
    ['process-exit.reward.ts', 'throw', /ReferenceError: process is not defined/, 'process.exit(0)'],
    ['uninitialised-key.reward.ts', 'throw', /TypeError: Cannot read properties of undefined \(reading 'value'\)/, 'READ-HERE'],
    ['returns-nan.reward.ts', 'bad-return', /^reward must be a finite number, got NaN$/, 'export function reward_function'],
    ['returns-undefined.reward.ts', 'bad-return', /^reward must be a finite number, got undefined$/, 'export function reward_function'],
    ['returns-string.reward.ts', 'bad-return', /^reward must be a finite number, got the string "plenty"$/, 'export function reward_function'],
    ['split-bad-dense.reward.ts', 'bad-return', /^dense must return a finite number, got NaN$/, 'export function dense'],
    ['top-level-throw.reward.ts', 'throw', /SyntaxError: .*JSON/, 'JSON.parse'],
    ['slow.reward.ts', 'timeout', /^exceeded 50 ms per call in 10 steps in a row \(the last took \d+ ms\)$/, 'while (Date.now() < until)'],
  ];
  await Promise.all(
    cases.map(async ([name, kind, message, marker]) => {
      const file = fixture(name);
      // A slow reward fails only after SLOW_STEPS_TO_FAIL slow steps in a row.
      const err = await failureOf(file, {}, 1, name === 'slow.reward.ts' ? SLOW_STEPS_TO_FAIL + 2 : 3);
      assertError(err, file, kind, message, marker === null ? undefined : lineOf(file, marker));
      if (name !== 'top-level-throw.reward.ts') assert.equal(err.env, 0);
    }),
  );
});

test('the sandbox exposes no host capabilities (require, process, timers, network) even through Function', async () => {
  const sandbox = await RewardSandbox.open(fixture('probe-globals.reward.ts'), 2);
  try {
    await sandbox.beginEpisodes([0, 1], [obs(0), obs(0)]);
    assert.deepEqual([...(await sandbox.step([obs(1), obs(1)]))], [0, 0]);
  } finally {
    await sandbox.close();
  }
});

test('a thrown error reports the original line of a TS file with types and interfaces above it', async () => {
  const file = fixture('throws-typed.reward.ts');
  const err = await failureOf(file, {}, 2, 3);
  assertError(err, file, 'throw', /^Error: reward gave up on step 3$/, lineOf(file, 'THROW-HERE'));
  assert.equal(err.column, readFileSync(file, 'utf8').split('\n')[err.line - 1]!.indexOf('new Error') + 1);
  assert.equal(err.env, 0, 'the first env to fail is reported');
  // The compiled JavaScript has the declarations erased, so its line differs: the source map did the work.
  const compiled = compileRewardFile(file);
  const jsLine = compiled.js.split('\n').findIndex((l) => l.includes('reward gave up')) + 1;
  assert.notEqual(jsLine, err.line);
});

test('an infinite loop times out at the looping line, the sandbox refuses further steps, and the file can be re-opened', async () => {
  const file = fixture('infinite-loop.reward.ts');
  const sandbox = await RewardSandbox.open(file, 2, { limits: { callWallMs: 40 } });
  await sandbox.beginEpisodes([0, 1], [obs(0), obs(0)]);
  const started = Date.now();
  const err = await sandbox.step([obs(1), obs(1)]).then(
    () => assert.fail('no time-out'),
    (e: unknown) => e as RewardError,
  );
  // The limit that fired, with its arithmetic, at the loop (not the function's declaration).
  assertError(err, file, 'timeout', /^a call did not return within the step's 580 ms \(40 ms per call × 2 calls \+ 500 ms\)$/, lineOf(file, 'while (true)'));
  assert.equal(err.env, 0);
  assert.ok(Date.now() - started < 2000, 'the loop is cut off within the batch budget');
  await assert.rejects(sandbox.step([obs(2), obs(2)]), (e: unknown) => e instanceof RewardError && e.kind === 'timeout');
  await sandbox.close();
  // Re-open: the editor re-runs after a fix, or the same file after the trainer stopped.
  const again = await RewardSandbox.open(fixture('counter.reward.ts'), 1);
  await again.beginEpisodes([0], [obs(0)]);
  assert.deepEqual([...(await again.step([obs(1)]))], [1]);
  await again.close();
});

test('a loop in a helper is reported at that loop; a loop at the top level names the top-level limit, not the per-call one', async () => {
  const nested = fixture('nested-loop.reward.ts');
  const inHelper = await failureOf(nested, { limits: { callWallMs: 100 } });
  assertError(inHelper, nested, 'timeout', /did not return within the step's 600 ms/, lineOf(nested, 'LOOPS-HERE'));
  assert.equal(inHelper.column, readFileSync(nested, 'utf8').split('\n')[inHelper.line - 1]!.indexOf('while') + 1);

  const topLevel = fixture('top-level-loop.reward.ts');
  const started = Date.now();
  const err = await RewardSandbox.open(topLevel, 1, { limits: { topLevelMs: 300 } }).then(
    async (s) => {
      await s.close();
      return assert.fail('the top level ran to the end');
    },
    (e: unknown) => e as RewardError,
  );
  assertError(
    err,
    topLevel,
    'timeout',
    /^the file's top level did not finish within 300 ms \(the limit for code outside the reward functions, run once\)$/,
    lineOf(topLevel, 'while (warmUp'),
  );
  assert.equal(err.env, null);
  assert.ok(Date.now() - started < 5000);
});

test('a 100 MB error message is cut to a few KB at the sandbox boundary, saying how much was cut', async () => {
  const file = fixture('huge-throw.reward.ts');
  // Building and cutting 100 MB takes seconds of wall time on a loaded machine (the default 6.5 s ran out at load 20).
  const err = await failureOf(file, { limits: { callWallMs: 20_000 } });
  assertError(err, file, 'throw', /^Error: x{4000,} … \[\d+ more characters cut\]$/, lineOf(file, 'THROW-HERE'));
  assert.ok(err.detail.length <= REWARD_LIMITS.errorChars + 60, `detail is ${err.detail.length} characters`);
  assert.ok(err.message.length < 5000 && JSON.stringify(err).length < 5000, 'the event payload is bounded too');
  const cut = Number(/\[(\d+) more characters cut\]/.exec(err.detail)![1]);
  assert.equal(cut + REWARD_LIMITS.errorChars, 'Error: '.length + 100_000_000);
});

test('the README states the sandbox limits of REWARD_LIMITS, and nothing else', () => {
  const readme = readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
  const fmt = (n: number) => n.toLocaleString('en-US');
  const row = (label: string) => readme.split('\n').find((l) => l.startsWith(`| ${label}`)) ?? assert.fail(`README has no "${label}" row`);
  assert.match(row('one reward call'), new RegExp(`\\b${fmt(REWARD_LIMITS.callCpuMs)} ms of CPU time`));
  assert.match(row('one step'), new RegExp(`${fmt(REWARD_LIMITS.callWallMs)} ms per call .*\\+ ${fmt(REWARD_LIMITS.stepSlackMs)} ms`));
  assert.match(row("the file's top level"), new RegExp(`${fmt(REWARD_LIMITS.topLevelMs)} ms`));
  assert.match(row('memory'), new RegExp(`${fmt(REWARD_LIMITS.memoryMb)} MB`));
  assert.match(row('error messages'), new RegExp(`${fmt(REWARD_LIMITS.errorChars)} characters`));
});

test('a memory bomb hits the heap limit ("exceeded N MB heap"), the host process survives, re-open works', async () => {
  const file = fixture('memory-bomb.reward.ts');
  const err = await failureOf(file, { limits: { memoryMb: 64, callWallMs: 10_000 } });
  assertError(err, file, 'memory', /^exceeded 64 MB heap$/, lineOf(file, 'export function reward_function'));
  const again = await RewardSandbox.open(fixture('counter.reward.ts'), 1, { limits: { memoryMb: 64 } });
  await again.beginEpisodes([0], [obs(0)]);
  assert.deepEqual([...(await again.step([obs(1)]))], [1]);
  await again.close();
});

test('a failing call leaves the sandbox usable once new episodes begin', async () => {
  const sandbox = await RewardSandbox.open(fixture('throws-typed.reward.ts'), 1);
  try {
    await sandbox.beginEpisodes([0], [obs(0)]);
    await sandbox.step([obs(1)]);
    await sandbox.step([obs(2)]);
    await assert.rejects(sandbox.step([obs(3)]), /gave up on step 3/);
    await sandbox.beginEpisodes([0], [obs(0)]);
    assert.deepEqual([...(await sandbox.step([obs(1)]))], [0.1], 'GLOBAL_DATA was reset: step 1 again');
  } finally {
    await sandbox.close();
  }
});

test('GLOBAL_DATA (a Set), position history and previous nearest persist across steps and reset per episode, per env', async () => {
  const sandbox = await RewardSandbox.open(fixture('counter.reward.ts'), 3);
  try {
    await sandbox.beginEpisodes([0, 1, 2], [obs(0), obs(0), obs(0)]);
    assert.deepEqual([...(await sandbox.step([obs(1), obs(1), obs(1)]))], [1, 1, 1]);
    assert.deepEqual([...(await sandbox.step([obs(2), obs(2), obs(2)]))], [2, 2, 2]);
    // Env 1's episode ends; its next episode starts from a reset observation with stone at 10.
    await sandbox.beginEpisodes([1], [obs(10)]);
    assert.deepEqual([...(await sandbox.step([obs(3), obs(11), obs(3)]))], [3, 1, 3]);
    assert.deepEqual([...(await sandbox.step([obs(4), obs(12), obs(4)]))], [4, 2, 4]);
    // An inconsistent observation (previous stone != current - 1) shows up in the reward: state is really per env.
    const out = await sandbox.step([obs(5), obs(20), obs(5)]);
    assert.deepEqual([...out], [5, 3 + 100000, 5]);
    assert.ok(out instanceof Float64Array);
  } finally {
    await sandbox.close();
  }
});

test('attack tasks pass damage_dealt and kill_entity; a non-attack run refuses a reward that needs them', async () => {
  const file = fixture('attack-params.reward.ts');
  const sandbox = await RewardSandbox.open(file, 2, { attack: true });
  try {
    await sandbox.beginEpisodes([0, 1], [obs(0), obs(0)]);
    const out = await sandbox.step([obs(1, { damage_dealt: 2.5 }), obs(1, { kill_entity: { cow: 1 }, damage_dealt: 1 })]);
    assert.deepEqual([...out], [2.5, 11]);
  } finally {
    await sandbox.close();
  }
  await assert.rejects(
    RewardSandbox.open(file, 1, { attack: false }),
    (e: unknown) => e instanceof RewardError && e.kind === 'contract' && /only attack tasks/.test(e.detail),
  );
});

test('dense/sparse exports get the scale rule applied by the runtime', async () => {
  const file = path.join(EXAMPLES, 'approach-pig.dense-sparse.reward.ts');
  const pig = (d: number, yaw = 0): StepObservation['nearest'] => ({ pig: [d, yaw, 0.2], grass_block: [3.2, 0, 0.5] });
  const sandbox = await RewardSandbox.open(file, 4);
  try {
    await sandbox.beginEpisodes([0, 1, 2, 3], [obs(0, { nearest: pig(8) }), obs(0, { nearest: {} }), obs(0, { nearest: pig(3) }), obs(0, { nearest: pig(5) })]);
    const first = await sandbox.step([
      obs(1, { nearest: pig(7.8) }), // closer: dense +, sparse 0
      obs(1, { nearest: {} }), // nothing: 0
      obs(1, { nearest: pig(1.8) }), // success while closing in: sparse +, dense +
      obs(1, { nearest: pig(5.5) }), // further away: dense -
    ]);
    assert.deepEqual([...first], [combineScaled(1, 0), combineScaled(0, 0), combineScaled(1, 1), combineScaled(-1, 0)]);
    assert.deepEqual([...first], [0.1, 0, 1.1, -0.1]);
    const second = await sandbox.step([
      obs(2, { nearest: pig(7.8, 0.3) }), // same distance, turned away: 0
      obs(2, { nearest: pig(30, -0.5) }), // a pig came into view: dense +
      obs(2, { nearest: pig(1.7) }), // still within 2 m: success again
      obs(2, { nearest: {}, health: 8 }), // lost sight and got hurt: both negative
    ]);
    assert.deepEqual([...second], [0, 0.1, 1.1, -1.1]);
  } finally {
    await sandbox.close();
  }
});

/** The task a reward file declares in its `// task: <id>` header. */
function taskOf(file: string): TaskSpec {
  const id = /^\/\/ task: (\S+)/m.exec(readFileSync(file, 'utf8'))?.[1];
  const task = id ? BUILTIN_TASKS[id] : undefined;
  assert.ok(task, `${file} has no known // task: header`);
  return task;
}

test('every example reward runs on realistic observation sequences and returns only the allowed values', async () => {
  const files = readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.reward.ts'))
    .map((f) => path.join(EXAMPLES, f));
  const allowed = new Set<number>(SCALE_RULE.allowedValues);
  const numEnvs = 3;
  const steps = 250;
  await Promise.all(
    files.map(async (file) => {
      const task = taskOf(file);
      const target = successTargets(task)[0]!;
      const trajectories = Array.from({ length: numEnvs }, (_, i) =>
        scriptedTrajectory({ world: task.world, target, steps, seed: 11 + i, attack: task.attack }),
      );
      // Env 2 gets hurt (a fall) halfway: the dense rewards must punish it.
      const hurtAt = Math.floor(steps / 2);
      for (let k = hurtAt; k <= steps; k++) trajectories[2]![k]!.health = 7;
      const sandbox = await RewardSandbox.open(file, numEnvs, { attack: task.attack });
      const rewards: number[][] = trajectories.map(() => []);
      try {
        await sandbox.beginEpisodes(
          [...Array(numEnvs).keys()],
          trajectories.map((t) => t[0]!),
        );
        for (let k = 1; k <= steps; k++) {
          const out = await sandbox.step(trajectories.map((t) => t[k]!));
          out.forEach((r, e) => rewards[e]!.push(r));
        }
      } finally {
        await sandbox.close();
      }
      const name = path.basename(file);
      for (const r of rewards.flat()) assert.ok(allowed.has(r), `${name} returned ${r}`);
      // Success pays the sparse +1 exactly on the steps that meet the task's success criterion.
      trajectories.forEach((t, e) => {
        t.slice(1).forEach((o, k) => {
          const success =
            task.success.kind === 'near'
              ? task.success.names.some((n) => (o.nearest[n]?.[0] ?? Infinity) < (task.success as { distance: number }).distance)
              : (o.kill_entity[task.success.mob] ?? 0) >= 1;
          const r = rewards[e]![k]!;
          if (e === 2 && k + 1 === hurtAt && !name.includes('.sparse.')) return; // the hurt step is -1 whatever else
          assert.equal(r >= 0.9, success, `${name} env ${e} step ${k + 1}: reward ${r}, success ${success}`);
        });
      });
      assert.ok(
        rewards.flat().some((r) => r >= 0.9),
        `${name}: the scripted agent reaches the goal`,
      );
      if (name.includes('.sparse.')) {
        assert.ok(
          rewards.flat().every((r) => r === 0 || r === 1),
          `${name} is sparse only`,
        );
      } else {
        assert.ok(rewards[2]![hurtAt - 1]! <= -0.9, `${name}: losing health is punished (got ${rewards[2]![hurtAt - 1]})`);
        assert.ok(rewards.flat().includes(0.1), `${name}: dense shaping pays for progress`);
        assert.ok(
          rewards.flat().some((r) => r === -0.1 || r === 0.9),
          `${name}: dense shaping punishes setbacks`,
        );
      }
    }),
  );
});

test('the sandbox watchdog counts only time this process ran: a stopped or sleeping machine does not kill the sandbox', async () => {
  let expired = false;
  const dog = watchdog(400, () => {
    expired = true;
  });
  // The process does not run for 3.5 s (as under SIGSTOP or a suspended laptop: here its event loop is blocked).
  const until = performance.now() + 3500;
  while (performance.now() < until) {
    // blocked
  }
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(expired, false, 'the time the process was not running counted against the host');
  await new Promise((resolve) => setTimeout(resolve, 700));
  assert.equal(expired, true, 'a host that really stopped answering is still caught');
  dog.clear();
});

test("past_agent_positions' history does not count against the reward's heap: a long episode on many envs runs with the allowance and fails without it", async () => {
  // 16 envs × 6,000 steps keep 96,000 positions (about 11 MB in the isolate) beside an 8 MB allowance for the reward.
  const envs = 16,
    steps = 6000;
  const run = async (opts: SandboxOptions) => {
    const sandbox = await RewardSandbox.open(fixture('counter.reward.ts'), envs, { limits: { memoryMb: 8, callWallMs: 10_000 }, ...opts });
    try {
      await sandbox.beginEpisodes(
        [...Array(envs).keys()],
        Array.from({ length: envs }, () => obs(0)),
      );
      for (let k = 1; k <= steps; k++) await sandbox.step(Array.from({ length: envs }, () => obs(k)));
    } finally {
      await sandbox.close();
    }
  };
  await run({ episodeSteps: steps });
  await assert.rejects(run({}), (err: unknown) => err instanceof RewardError && err.kind === 'memory');
  assert.ok(historyMb(100, 60_000) > 700, 'an explore-diamond evaluation batch (100 envs × 60,000 steps) keeps over 0.7 GB of positions');
});

test('a sandbox host killed by a signal mid-step fails the step with that signal named (not as memory), located in the file; later calls get the same error', async () => {
  const file = fixture('infinite-loop.reward.ts');
  for (const signal of ['SIGBUS', 'SIGKILL'] as const) {
    const sandbox = await RewardSandbox.open(file, 1, { limits: { callWallMs: 60_000 } });
    try {
      await sandbox.beginEpisodes([0], [obs(0)]);
      const step = sandbox.step([obs(1)]);
      // The reward is spinning in its loop when the host is killed.
      await new Promise((resolve) => setTimeout(resolve, 200));
      process.kill(sandbox.hostPid!, signal);
      const err = await step.then(
        () => assert.fail('the step returned from a killed host'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof RewardError, String(err));
      assertError(err, file, 'host', new RegExp(`^the sandbox host was ended by ${signal} \\(`), lineOf(file, 'export function reward_function'));
      assert.doesNotMatch(err.detail, /heap|memory limit/);
      await assert.rejects(sandbox.step([obs(2)]), (again: unknown) => again === err);
    } finally {
      await sandbox.close();
    }
  }
});

test('a call written to a host that has just died rejects with the cause instead of crashing the process with EPIPE', async () => {
  const file = fixture('counter.reward.ts');
  const sandbox = await RewardSandbox.open(file, 1);
  try {
    await sandbox.beginEpisodes([0], [obs(0)]);
    await sandbox.step([obs(1)]);
    process.kill(sandbox.hostPid!, 'SIGKILL');
    // Dead, but not yet reaped: this process has not run its event loop since, so the sandbox does not know.
    const until = Date.now() + 300;
    while (Date.now() < until) {
      // the host's pipe closes meanwhile
    }
    const err = await sandbox.step([obs(2)]).then(
      () => assert.fail('a dead host answered'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof RewardError, String(err));
    assertError(err, file, 'host', /^the sandbox host was ended by SIGKILL \(/);
    // The next call, after the exit is known, is refused the same way; nothing was thrown at the process.
    await assert.rejects(sandbox.beginEpisodes([0], [obs(0)]), (again: unknown) => again === err);
  } finally {
    await sandbox.close();
  }
});

test('a warm host serves the next sandbox (no new process); a host whose reward timed out is never reused', async () => {
  const first = await RewardSandbox.open(fixture('counter.reward.ts'), 1, { warmHost: true });
  const pid = first.hostPid;
  await first.beginEpisodes([0], [obs(0)]);
  assert.deepEqual([...(await first.step([obs(1)]))], [1]);
  await first.close();
  // The same process, with a fresh isolate: the new sandbox's episodes start from nothing.
  const second = await RewardSandbox.open(fixture('counter.reward.ts'), 1, { warmHost: true });
  assert.equal(second.hostPid, pid);
  await second.beginEpisodes([0], [obs(0)]);
  assert.deepEqual([...(await second.step([obs(1)]))], [1]);
  await second.close();
  const stuck = await RewardSandbox.open(fixture('infinite-loop.reward.ts'), 1, { warmHost: true, limits: { callWallMs: 100 } });
  assert.equal(stuck.hostPid, pid);
  await stuck.beginEpisodes([0], [obs(0)]);
  await assert.rejects(stuck.step([obs(1)]), (e: unknown) => e instanceof RewardError && e.kind === 'timeout');
  await stuck.close();
  const after = await RewardSandbox.open(fixture('counter.reward.ts'), 1, { warmHost: true });
  assert.notEqual(after.hostPid, pid);
  await after.close();
  await endWarmHosts();
});
