import { testFinding } from '../../../test/helpers/finding-tester';
import { targetProgress } from './target-progress';

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
