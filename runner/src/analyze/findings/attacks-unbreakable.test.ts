import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { testFinding } from '../../../test/helpers/finding-tester';
import { tempDir } from '../../../test/helpers/tmp';
import type { StepObservation } from '../../schema';
import { patchReward } from '../patches';
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

describe('analyzer finding attacks-unbreakable: its patch, run in the reward sandbox', () => {
  const tmp = tempDir('rewardsmith-depth-limit-');
  const BUNDLED = path.join(__dirname, '../../../rewards/explore-diamond.dense.reward.ts');
  const stone: Record<string, [number, number, number]> = { stone: [0.3, 0, 0.5] };
  const step = (y: number, nearest = stone): StepObservation => ({
    nearest,
    inventory_change: {},
    health: 20,
    position: [0.5, y, 0.5, 0, 80],
    damage_dealt: 0,
    kill_entity: {},
  });

  test('the bundled dense reward, patched: the feet more than 2 m below the start cost, unless diamond ore is in view', async () => {
    const file = path.join(tmp, 'explore-diamond.reward.ts');
    const req = { kind: 'depth-limit' as const, metres: 2, targets: ['diamond_ore'], why: 'they dug down to bedrock.' };
    writeFileSync(file, patchReward(file, readFileSync(BUNDLED, 'utf8'), req).patched);
    // A shaft from y 11 (the bundled reward's 2 m cells: y 10–11.99, 8–9.99, …): 1.5 m down is free, 3.5 and 5.5 m
    // down cost, and diamond ore in view down there is followed.
    const ore: Record<string, [number, number, number]> = { ...stone, diamond_ore: [3, 0, 0.5] };
    const shaft = [step(11), step(9.5), step(7.5), step(5.5), step(5.5, ore)];
    const [rewards] = await rewardsOn(file, [shaft], false);
    assert.deepEqual(rewards!.map(denseSign), [1, -1, -1, 1], 'y 9.5: a new cell pays; y 7.5 and 5.5: below the limit; with ore in view: spotted');
    // The reward without the patch pays the way down.
    const [before] = await rewardsOn(BUNDLED, [shaft], false);
    assert.deepEqual(before!.map(denseSign), [1, 1, 1, 1]);
  });
});
