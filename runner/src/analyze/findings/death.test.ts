import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { testFinding } from '../../../test/helpers/finding-tester';
import { applyWithPatch, lintProblems, VARIABLE_DENSE_REWARD } from '../../../test/helpers/patch-check';
import { tempDir } from '../../../test/helpers/tmp';
import { patchReward } from '../patches';
import { death } from './death';

testFinding(death, {
  quiet: [{ name: 'a spinning agent that never died', run: 'spin-in-place', task: 'approach-tree' }],
  finds: [
    {
      name: 'agents walking into lava they had in view',
      run: 'lava-deaths',
      task: 'explore-diamond',
      findings: [
        {
          id: 'death-lava',
          episodeIds: [0, 1, 2],
          message: /^3 failed episodes of 6 \(50 %\) ended in death by lava; the lava was in view before death in 3 of them\.$/,
        },
      ],
    },
  ],
});

describe('analyzer finding death: its patch', () => {
  const tmp = tempDir('rewardsmith-death-');
  test('a reward whose dense term is a variable gets the penalty assigned before the return', () => {
    const file = path.join(tmp, 'variable.reward.ts');
    const text = VARIABLE_DENSE_REWARD; // and no newline at the end, which the diff must say
    writeFileSync(file, text);
    const p = patchReward(file, text, { kind: 'hazard-penalty', names: ['lava'], distance: 5, why: 'lava.' });
    assert.match(p.patched, /if \(lava_in_view !== undefined && lava_in_view\[0\] < LAVA_PENALTY_DISTANCE\) dense = -1;\n  return Math\.sign\(sparse\)/);
    assert.match(p.diff, /^ \}\n\\ No newline at end of file\n$/m);
    assert.equal(applyWithPatch(file, p.diff), p.patched);
    assert.deepEqual(lintProblems(file, p.patched), lintProblems(file, text));
  });
});
