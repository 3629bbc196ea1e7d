import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { testFinding } from '../../../test/helpers/finding-tester';
import { applyWithPatch, lintProblems, VARIABLE_DENSE_REWARD } from '../../../test/helpers/patch-check';
import { tempDir } from '../../../test/helpers/tmp';
import { compileRewardFile } from '../../reward/index';
import { patchReward } from '../patches';
import { timeoutTargetUnseen } from './timeout-target-unseen';

testFinding(timeoutTargetUnseen, {
  quiet: [{ name: 'a spinning agent with the tree in view', run: 'spin-in-place', task: 'approach-tree' }],
  finds: [
    {
      name: 'a random walk that never saw a cow',
      run: 'sparse-random',
      task: 'approach-cow',
      findings: [
        {
          id: 'timeout-target-unseen',
          episodeIds: [1, 2, 3, 4],
          message:
            /^4 failed episodes of 6 \(67 %\) ran out of time without the target \(cow\) in view at the end; they visited 11 distinct 4 m cells on average\.$/,
        },
      ],
    },
  ],
});

describe('analyzer finding timeout-target-unseen: its patch', () => {
  const tmp = tempDir('rewardsmith-timeout-');
  test('a reward whose dense term is a variable gets the exploration bonus just before the return', () => {
    const file = path.join(tmp, 'variable-explore.reward.ts');
    const text = VARIABLE_DENSE_REWARD + '\n';
    writeFileSync(file, text);
    const p = patchReward(file, text, { kind: 'exploration-bonus', cellSize: 4, targets: ['oak_log', 'birch_log'], why: 'explore.' });
    assert.match(p.patched, /GLOBAL_DATA\.visited_cells\.add\(cell_key\);\n +dense = 1;\n +\}\n +\}\n  return Math\.sign\(sparse\)/);
    assert.equal(applyWithPatch(file, p.diff), p.patched);
    compileRewardFile(file, p.patched);
    assert.deepEqual(lintProblems(file, p.patched), lintProblems(file, text));
    // Applied twice, the second analysis finds the bonus already there.
    assert.throws(() => patchReward(file, p.patched, { kind: 'exploration-bonus', cellSize: 4, targets: ['oak_log'], why: 'again.' }), /already pays/);
  });
});
