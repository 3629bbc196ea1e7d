// The Python reward runtime (Pyodide in a child process): the contract and what the sandbox refuses are
// located before the interpreter starts; at run time the reward's attempts at the file system, eval, exit,
// endless recursion and loops and unbounded allocation are stopped at their line, and nothing outside is
// touched. Pyodide takes seconds to start, so each reward file opens one sandbox that all its cases share.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RewardError, RewardSandbox, type RewardErrorKind } from '../src/reward';
import type { StepObservation } from '../src/schema';
import { SLOW_STEPS_TO_FAIL } from '../src/reward/protocol';
import { lineOf } from './helpers/source-line';

const FIXTURES = path.join(__dirname, 'fixtures', 'rewards', 'python');
const fixture = (name: string) => path.join(FIXTURES, name);
const ESCAPE_FILE = '/tmp/rewardsmith-python-sandbox-escape';

function obs(nearest: Record<string, [number, number, number]>, x = 1, extra: Partial<StepObservation> = {}): StepObservation {
  return { nearest, inventory_change: {}, health: 10, position: [x, 64, 0, 0, 0], damage_dealt: 0, kill_entity: {}, ...extra };
}

async function rejection(p: Promise<unknown>): Promise<RewardError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof RewardError, `expected a RewardError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a RewardError');
}

function assertError(err: RewardError, kind: RewardErrorKind, message: RegExp, line?: number) {
  assert.equal(err.kind, kind, err.message);
  assert.match(err.detail, message, err.message);
  if (line !== undefined) assert.equal(err.line, line, err.message);
  assert.ok(err.line >= 1 && err.column >= 1, err.message);
}

const HEADER = 'def reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA):\n';

test('refused before the interpreter starts: modules, the JavaScript bridge, dunder escapes, frames; located', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rewardsmith-py-'));
  try {
    const cases: [string, RewardErrorKind, RegExp, number, number][] = [
      ['import os\n', 'contract', /no module "os"/, 1, 8],
      ['import js\n', 'contract', /no module "js"/, 1, 8],
      ['from pyodide.ffi import create_proxy\n', 'contract', /no module "pyodide.ffi"/, 1, 6],
      ['import socket, math\n', 'contract', /no module "socket"/, 1, 8],
      ['import subprocess as sp\n', 'contract', /no module "subprocess"/, 1, 8],
      [`${HEADER}    return __import__("os").getpid()\n`, 'contract', /name __import__/, 2, 12],
      [`${HEADER}    return len(().__class__.__base__.__subclasses__())\n`, 'contract', /attribute \.__class__/, 2, 19],
      [`${HEADER}    g = (x for x in [])\n    return g.gi_frame.f_back\n`, 'contract', /attribute \.gi_frame/, 3, 14],
      [`${HEADER}    return type(1).mro()\n`, 'contract', /attribute \.mro/, 2, 20],
      [`${HEADER}    print "x"\n    return 0\n`, 'compile', /Python 2 print statement/, 2, 5],
      [`${HEADER}    try:\n        return 1\n    except ValueError, e:\n        return 0\n`, 'compile', /except E as name/, 4, 5],
      [`${HEADER}    return 1 if health <> 10 else 0\n`, 'compile', /Python 3 writes !=/, 2, 24],
      [`${HEADER}    return (1 +\n`, 'compile', /syntax error/, 2, undefined as never],
      [
        `def reward_function(current_nearest_blocks, health):\n    return 0\n`,
        'contract',
        /parameter 2 is "health" but must be "previous_nearest_blocks"/,
        1,
        45,
      ],
      [`def dense(current_nearest_blocks):\n    return 0\n`, 'contract', /defines dense but no sparse/, 1, 5],
    ];
    for (const [i, [source, kind, message, line, column]] of cases.entries()) {
      const file = path.join(dir, `case-${i}.reward.py`);
      writeFileSync(file, source);
      const err = await rejection(RewardSandbox.open(file, 1));
      assertError(err, kind, message, line);
      if (column !== undefined) assert.equal(err.column, column, `${JSON.stringify(source)}: ${err.message}`);
      assert.equal(err.file, file);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('hostile attempts at run time fail at their line, the sandbox stays usable, nothing outside is touched', async () => {
  rmSync(ESCAPE_FILE, { force: true });
  const file = fixture('hostile.reward.py');
  // A generous wall-clock allowance: the slow call below must be judged by its CPU time, on a loaded machine too.
  const sandbox = await RewardSandbox.open(file, 2, { limits: { callWallMs: 10_000 } });
  try {
    await sandbox.beginEpisodes([0, 1], [obs({}), obs({})]);
    // Per-episode memory and history, per env: steps * 100 + history length + x / 1000.
    assert.deepEqual(Array.from(await sandbox.step([obs({}, 1), obs({}, 2)])), [102.001, 102.002]);
    assert.deepEqual(Array.from(await sandbox.step([obs({}, 3), obs({}, 4)])), [203.003, 203.004]);
    const attempts: [string, RegExp, string][] = [
      ['open', /NameError: name 'open' is not defined/, '# open'],
      ['eval', /NameError: name 'eval' is not defined/, '# eval'],
      ['exec', /NameError: name 'exec' is not defined/, '# exec'],
      ['getattr', /NameError: name 'getattr' is not defined/, '# getattr'],
      ['globals', /NameError: name 'globals' is not defined/, '# globals'],
      ['exit', /NameError: name 'exit' is not defined/, '# exit'],
      ['recursion', /RecursionError: maximum recursion depth exceeded/, '# recursion without end'],
    ];
    for (const [mode, message, marker] of attempts) {
      const err = await rejection(sandbox.step([obs({}), obs({ [mode]: [1, 0, 0] })]));
      assertError(err, 'throw', message, lineOf(file, marker));
      assert.equal(err.env, 1, err.message);
    }
    const none = await rejection(sandbox.step([obs({ none: [1, 0, 0] }), obs({})]));
    assertError(none, 'bad-return', /reward must be a finite number, got None/);
    assert.equal(none.env, 0);
    // A bare except catches the NameError (only Exceptions), and "{0.real}".format stays a string.
    assert.deepEqual(Array.from(await sandbox.step([obs({ swallow: [1, 0, 0] }), obs({ format: [1, 0, 0] })])), [0.5, 4]);
    // Still usable, memory intact: env 1's count went on through the failed steps it took part in.
    const after = Array.from(await sandbox.step([obs({}, 5), obs({}, 6)]));
    assert.ok(
      after.every((v) => v > 300),
      String(after),
    );
    // A call that returns, but computes for longer than 50 ms step after step, ends the run (fatal).
    let slow: RewardError | undefined;
    for (let k = 0; k < SLOW_STEPS_TO_FAIL + 5 && !slow; k++) {
      slow = await sandbox.step([obs({}), obs({ slow: [1, 0, 0] })]).then(
        () => undefined,
        (err: RewardError) => err,
      );
    }
    assert.ok(slow, `${SLOW_STEPS_TO_FAIL + 5} slow steps ran`);
    assertError(slow, 'timeout', /exceeded 50 ms per call in 10 steps in a row/, lineOf(file, 'def reward_function'));
    assert.equal(slow.env, 1);
  } finally {
    await sandbox.close();
  }
  assert.ok(!existsSync(ESCAPE_FILE), 'the reward wrote a file outside the sandbox');
});

test('an endless loop, even inside try/except, is stopped by the time limit at the looping line; one inside C arithmetic too', async () => {
  const file = fixture('infinite-loop.reward.py');
  const sandbox = await RewardSandbox.open(file, 1, { limits: { callWallMs: 300, stepSlackMs: 100 } });
  try {
    await sandbox.beginEpisodes([0], [obs({})]);
    const err = await rejection(sandbox.step([obs({})]));
    assertError(err, 'timeout', /a call did not return within the step's 400 ms/);
    const loop = lineOf(file, '# loop');
    assert.ok(err.line >= loop && err.line <= loop + 4, `located at ${err.line}, the loop is lines ${loop}–${loop + 4}`);
    assert.equal(err.env, 0);
    // A timed-out interpreter is not trusted again.
    await rejection(sandbox.step([obs({})]));
  } finally {
    await sandbox.close();
  }
  // A computation inside C (a huge power) is interrupted too (CPython checks for signals in long arithmetic).
  // Its budget leaves a loaded machine time to reach the reward's line: at load 20 a 400 ms budget could run out in
  // the host's driver before the call began (then the error is at the function, line 1, not at the computation).
  const cLoop = fixture('c-loop.reward.py');
  const stuck = await RewardSandbox.open(cLoop, 1, { limits: { callWallMs: 1500, stepSlackMs: 100 } });
  try {
    await stuck.beginEpisodes([0], [obs({})]);
    const err = await rejection(stuck.step([obs({})]));
    assertError(err, 'timeout', /a call did not return within the step's 1600 ms/, lineOf(cLoop, '10 ** 10 ** 9'));
    // A timed-out interpreter is not trusted again.
    await rejection(stuck.step([obs({})]));
  } finally {
    await stuck.close();
  }
});

test('unbounded allocation is stopped at the memory limit even when the reward catches MemoryError', async () => {
  const file = fixture('memory-bomb.reward.py');
  // A generous wall-clock allowance: the allocations run inside C (no time check there), ~1 CPU-second on a loaded machine.
  const sandbox = await RewardSandbox.open(file, 1, { limits: { memoryMb: 64, callWallMs: 10_000 } });
  try {
    await sandbox.beginEpisodes([0], [obs({})]);
    const err = await rejection(sandbox.step([obs({})]));
    assertError(err, 'memory', /exceeded 64 MB heap/);
  } finally {
    await sandbox.close();
  }
});

test('dense and sparse at the top level are combined with the scale rule; the numpy shim computes the example', async () => {
  const sandbox = await RewardSandbox.open(fixture('dense-sparse.reward.py'), 3);
  try {
    await sandbox.beginEpisodes([0, 1, 2], [obs({}), obs({}), obs({})]);
    const values = await sandbox.step([obs({ lava: [3, 0, 0] }), obs({}, 1, { health: 4 }), obs({ lava: [3, 0, 0] }, 1, { health: 2 })]);
    assert.deepEqual(Array.from(values), [-0.1, 1, 0.9]);
  } finally {
    await sandbox.close();
  }
  const tree = await RewardSandbox.open(fixture('approach-tree.reward.py'), 2);
  try {
    const log = (d: number) => obs({ oak_log: [d, 0, 0] });
    await tree.beginEpisodes([0, 1], [log(5), obs({})]);
    // closer (+0.1), closer within 1 m (success +1, closer +0.1), same distance (success only); env 1 sees nothing.
    const got = [];
    for (const d of [4, 0.5, 0.5]) got.push(Array.from(await tree.step([log(d), obs({})])));
    assert.deepEqual(got, [
      [0.1, 0],
      [1.1, 0],
      [1, 0],
    ]);
  } finally {
    await tree.close();
  }
});
