// The client's own logic, without an editor: task header, runner event stream, analyzer patch application.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { makeEvent, type RunnerEvent } from '../../runner/src/events';
import { applyUnifiedDiff, PatchError } from '../../runner/src/diff';
import { taskFromHeader } from '../../runner/src/task-list';
import { NdjsonEventReader, rewardEntryLine } from '../src/core';

const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8');

test('the task comes from a `// task:` line in the header comments only', () => {
  assert.equal(taskFromHeader(fixture('lava.reward.ts')), 'explore-diamond');
  assert.equal(taskFromHeader('// Design thoughts\n//   task:  approach-cow  \nexport function reward_function() {}'), 'approach-cow');
  assert.equal(taskFromHeader('// tasks/my-task.yaml is not a header\nconst x = 1;\n// task: approach-tree'), undefined);
  assert.equal(taskFromHeader('// task: tasks/lava-walk.yaml\n'), 'tasks/lava-walk.yaml');
});

test('the CodeLens sits on reward_function, else on the dense export', () => {
  assert.equal(rewardEntryLine(fixture('lava.reward.ts')), 2);
  assert.equal(rewardEntryLine('// task: approach-pig\n\nexport function dense(a) {}\nexport function sparse(a) {}'), 2);
  assert.equal(rewardEntryLine('export const reward_function = (a) => 0;'), 0);
  assert.equal(rewardEntryLine('const x = 1;'), undefined);
});

test('runner events split across chunks arrive whole and in order; stray output is kept', () => {
  const events: RunnerEvent[] = [];
  const other: string[] = [];
  const reader = new NdjsonEventReader(
    (e) => events.push(e),
    (l) => other.push(l),
  );
  const progress = JSON.stringify(
    makeEvent({
      type: 'progress',
      update: 1,
      frames: 2048,
      total_frames: 4096,
      fps: 900,
      mean_return: 0.4,
      success_rate: 0.25,
      success: { count: 10, n: 40, rate: 0.25, ci95: [0.14, 0.4], started_from_frame: 0, started_to_frame: 1024, mean_return: 0.3 },
      episodes: 3,
      policy_loss: 0.1,
      value_loss: 0.2,
      entropy: 2.6,
      kl: 0.01,
      wall_seconds: 2.3,
    }),
  );
  const finished = JSON.stringify(makeEvent({ type: 'finished', ok: true, run_dir: 'runs/a', summary: 'runs/a/summary.json' }));
  const stream = `${progress}\nWARNING: tfjs wasm backend\r\n${JSON.stringify({ v: 99, type: 'progress' })}\n${finished}`;
  for (let i = 0; i < stream.length; i += 7) reader.push(stream.slice(i, i + 7));
  reader.end();
  assert.deepEqual(
    events.map((e) => e.type),
    ['progress', 'finished'],
  );
  assert.equal(events[0].type === 'progress' && events[0].success_rate, 0.25);
  assert.deepEqual(other, ['WARNING: tfjs wasm backend', '{"v":99,"type":"progress"}']);
});

test('an analyzer patch applies, also after the file moved by a few lines', () => {
  const reward = fixture('lava.reward.ts');
  const diff = fixture('lava-penalty.diff');
  const patched = applyUnifiedDiff(reward, diff);
  assert.match(
    patched,
    /const lava = current_nearest_blocks\['lava'\];\n  if \(lava !== undefined && lava\[0\] < 3\) dense = -1;\n  if \(ore !== undefined && ore\[0\] < 2\)/,
  );
  assert.equal(patched.split('\n').length, reward.split('\n').length + 3);
  const moved = reward.replace('// Design thoughts', '// Edited since the run.\n// Design thoughts');
  assert.match(applyUnifiedDiff(moved, diff), /\/\/ Edited since the run\.[\s\S]*dense = 1;\n  \/\/ The agent died in lava/);
});

test('a patch whose lines were edited away is refused with the hunk named', () => {
  const edited = fixture('lava.reward.ts').replace('if (ore !== undefined) dense = 1;', 'if (ore) dense = 1;');
  assert.throws(
    () => applyUnifiedDiff(edited, fixture('lava-penalty.diff')),
    (e: unknown) => e instanceof PatchError && /hunk 1 .*line 6/.test(e.message),
  );
  assert.throws(() => applyUnifiedDiff('x', 'not a diff'), PatchError);
});
