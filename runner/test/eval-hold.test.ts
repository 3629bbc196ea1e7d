// Evaluation holds the envs whose episodes no longer count (all counted episodes have started) instead of
// stepping them to the end of the last counted episode: a 100-episode evaluation on 25 envs stepped up to
// 25 × the longest chain of episodes, most of it after the envs' last counted episode. A held simulator env
// is not stepped at all, and the others see exactly what they saw before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimBatch } from '../src/env/sim/vec';
import { HOLD_ACTION, type StepObservation } from '../src/env/types';
import { evaluate } from '../src/runs/evaluate';
import { GAME_FACTS } from '../src/schema';
import { BUILTIN_TASKS, type TaskSpec } from '../src/tasks';

/** approach-tree with 50-step episodes (a random policy times out: every episode ends at the limit). */
const task: TaskSpec = { ...BUILTIN_TASKS['approach-tree']!, maxSteps: 50 };
const action = (k: number, i: number) => (k * 5 + i * 3) % GAME_FACTS.actions.length;

test('a held simulator env is not stepped: it resumes where it stopped, and the other envs are unchanged', () => {
  const steps = 40,
    holdFrom = 10,
    holdFor = 10;
  const plain = new SimBatch(task, 3, 0);
  const holding = new SimBatch(task, 3, 0);
  plain.reset([1, 2, 3]);
  holding.reset([1, 2, 3]);
  const seenPlain: StepObservation[][] = [[], [], []];
  const seenHolding: StepObservation[][] = [[], [], []];
  // Env 1 of `holding` is held for holdFor steps and then plays the actions env 1 of `plain` played from holdFrom.
  for (let k = 0; k < steps + holdFor; k++) {
    if (k < steps) {
      const r = plain.step(Int32Array.from([0, 1, 2], (i) => action(k, i)));
      r.obs.forEach((o, i) => seenPlain[i]!.push(o));
    }
    const held = k >= holdFrom && k < holdFrom + holdFor;
    const k1 = k < holdFrom ? k : k - holdFor;
    const actions = Int32Array.from([0, 1, 2], (i) => (i === 1 ? (held ? HOLD_ACTION : action(k1, 1)) : action(k, i)));
    if (k >= steps) actions[0] = actions[2] = HOLD_ACTION;
    const r = holding.step(actions);
    r.obs.forEach((o, i) => {
      if (actions[i] !== HOLD_ACTION) seenHolding[i]!.push(o);
    });
    if (held) assert.equal(r.obs[1], seenHolding[1]!.at(-1), 'a held env repeats its last observation');
  }
  assert.deepEqual(seenHolding[0], seenPlain[0]);
  assert.deepEqual(seenHolding[2], seenPlain[2]);
  assert.deepEqual(seenHolding[1], seenPlain[1], 'the held env went on as if it had never been held');
});

test('evaluation steps no env after its last counted episode, and records the same episodes', async () => {
  let calls = 0;
  const run = () =>
    evaluate({
      task,
      episodes: 5,
      numEnvs: 3,
      seed: 7,
      trainingSeeds: new Set(),
      act: (_features, n) => {
        const k = calls++;
        return Int32Array.from({ length: n }, (_, i) => action(k, i));
      },
      sandbox: null,
      workers: 0,
    });
  const result = await run();
  const iterations = calls;
  // Envs 0 and 1 play two 50-step counted episodes each, env 2 one: it is held for the last 50 steps.
  assert.equal(iterations, 100);
  assert.equal(result.frames, 250, 'before: 3 envs × 100 steps = 300 frames');
  assert.deepEqual(
    result.episodes.map((e) => [e.episode, e.steps]),
    [0, 1, 2, 3, 4].map((e) => [e, 50]),
  );
  calls = 0;
  assert.deepEqual((await run()).episodes, result.episodes, 'deterministic');
});
