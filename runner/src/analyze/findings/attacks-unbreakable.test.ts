import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { testFinding } from '../../../test/helpers/finding-tester';
import type { StepObservation } from '../../schema';
import { denseSign, rewardsOn } from '../rerun';
import { attacksUnbreakable } from './attacks-unbreakable';

testFinding(attacksUnbreakable, {
  quiet: [
    { name: 'digging sideways at the start height until the pickaxe wears out', run: 'tool-worn-out', task: 'explore-diamond' },
    { name: 'spinning on the ground', run: 'spin-in-place', task: 'approach-tree' },
  ],
  finds: [
    {
      // The scripted lava-seeker digs one block down whenever no lava is in sight: two of its time-outs end on bedrock.
      name: 'shafts dug down to bedrock, attacked to the end',
      run: 'lava-deaths',
      task: 'explore-diamond',
      findings: [
        {
          id: 'attacks-unbreakable',
          episodeIds: [3, 5],
          message:
            /^2 failed episodes of 6 \(33 %\) ended attacking bedrock, which no tool breaks \(minecraft-data 1\.16\.5: not diggable\), a median 7\.5 m below their start height, first reached at a median step 337\.$/,
        },
      ],
    },
  ],
});

// What the suggestion says of a reward that counts exploration in 3D cells, replayed in the sandbox on the bundled
// explore-diamond reward (its cells are 2 m): a shaft down pays each new cell as a tunnel at the start height does.
test('analyzer finding attacks-unbreakable: the bundled explore-diamond reward pays a shaft down as it pays a tunnel', async () => {
  const bundled = path.join(__dirname, '../../../rewards/explore-diamond.dense.reward.ts');
  const at = (x: number, y: number): StepObservation => ({
    nearest: { stone: [0.3, 0, 0.5] },
    inventory_change: {},
    health: 20,
    position: [x, y, 0.5, 0, 0],
    damage_dealt: 0,
    kill_entity: {},
  });
  const shaft = [at(0.5, 11), at(0.5, 9.5), at(0.5, 7.5), at(0.5, 5.5)];
  const tunnel = [at(0.5, 11), at(2.5, 11), at(4.5, 11), at(6.5, 11)];
  const [down, along] = await rewardsOn(bundled, [shaft, tunnel], false);
  assert.deepEqual(down!.map(denseSign), [1, 1, 1]);
  assert.deepEqual(along!.map(denseSign), [1, 1, 1]);
});
