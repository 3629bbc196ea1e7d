import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contextOf, testFinding } from '../../../test/helpers/finding-tester';
import { toolWornOut } from './tool-worn-out';

testFinding(toolWornOut, {
  quiet: [
    { name: 'lava deaths with the iron pickaxe still whole', run: 'lava-deaths', task: 'explore-diamond' },
    { name: 'a task that starts with no tool', run: 'spin-in-place', task: 'approach-tree' },
  ],
  finds: [
    {
      name: 'digging around itself until the golden pickaxe wears out',
      run: 'tool-worn-out',
      task: { ...contextOf({ name: '', run: 'tool-worn-out', task: 'explore-diamond' }).task!, inventory: { golden_pickaxe: 1 } },
      findings: [
        {
          id: 'tool-worn-out',
          episodeIds: [0, 1, 2, 3],
          message:
            /^4 failed episodes of 4 \(100 %\) ended with their golden_pickaxe worn out \(uses before it breaks, minecraft-data 1\.16\.5: golden_pickaxe 32\); they collected a median 31 blocks and entered a median 2 distinct 1 m columns: 20\.7 blocks a column over all of them, where a 1 × 2 tunnel takes 2\.$/,
        },
      ],
    },
  ],
});

test('analyzer finding tool-worn-out: says when the recorded steps show the tool go', () => {
  const ctx = contextOf({ name: '', run: 'tool-worn-out', task: 'explore-diamond' });
  const finding = toolWornOut.find({ ...ctx, task: { ...ctx.task!, inventory: { golden_pickaxe: 1 } } });
  const first = [finding].flat()[0]!;
  assert.match(
    first.evidence[0]!.note,
    /^ended without its golden_pickaxe \(worn out at step 498\); timed out at step 500; 31 blocks collected, 1 distinct 1 m column entered$/,
  );
  assert.deepEqual(first.evidence[0]!.steps, [498, 500]);
});
