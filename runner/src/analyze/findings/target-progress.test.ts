import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { testFinding } from '../../../test/helpers/finding-tester';
import { targetProgress } from './target-progress';
import { patchReward, PatchUnavailable } from '../patches';
import { loadPythonParser } from '../../reward/python-syntax';

testFinding(targetProgress, {
  quiet: [{ name: 'looking at the floor, the pig never seen', run: 'look-down', task: 'approach-pig' }],
  finds: [
    {
      name: 'spinning with the tree in view: not approached, or lost',
      run: 'spin-in-place',
      task: 'approach-tree',
      findings: [
        {
          id: 'target-not-approached',
          episodeIds: [0, 1, 2, 4],
          message:
            /^4 failed episodes of 5 \(80 %\) had the target \(oak_log\) in view and did not walk up to it: its distance grew by 0\.131 m per step on average/,
        },
        {
          id: 'target-lost',
          episodeIds: [3],
          message: /^1 failed episode of 5 \(20 %\) saw the target \(oak_log\) and lost it: out of view for the last 8\+ steps/,
        },
      ],
    },
  ],
});

describe('the approach patch', () => {
  test('is not written twice: a reward that already pays only a new closest distance gets no second copy (TypeScript and Python)', async () => {
    // The no-LLM loop on approach-cow (seed 7) re-proposed it on the reward its own iteration 2 had patched, and
    // spent iteration 3 training the same reward again.
    await loadPythonParser();
    const req = { kind: 'approach-record' as const, targets: ['oak_log', 'birch_log'], step: 0.1, why: 'creeping paid.' };
    for (const file of [
      path.join(__dirname, '../../../test/fixtures/rewards/weak-approach-tree.reward.ts'),
      path.join(__dirname, '../../../test/fixtures/rewards/python/approach-tree.reward.py'),
    ]) {
      const once = patchReward(file, readFileSync(file, 'utf8'), req).patched;
      assert.throws(
        () => patchReward(file, once, req),
        (e: Error) => e instanceof PatchUnavailable && /already pays only a new closest distance/.test(e.message),
        file,
      );
    }
  });
});
