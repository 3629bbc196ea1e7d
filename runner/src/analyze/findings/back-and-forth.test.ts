import { testFinding } from '../../../test/helpers/finding-tester';
import { backAndForth } from './back-and-forth';

testFinding(backAndForth, {
  quiet: [{ name: 'spinning on the spot goes nowhere, but not back and forth', run: 'spin-in-place', task: 'approach-tree' }],
  finds: [
    {
      name: 'walking back and forth on a "moved" bonus',
      run: 'back-and-forth',
      task: 'approach-cow',
      findings: [
        {
          id: 'back-and-forth',
          episodeIds: [0, 1, 2, 3, 4, 5],
          message:
            /^6 failed episodes of 6 \(100 %\) walked back and forth with no net progress, and in 6 of them the reward paid more often than it cost during the oscillation: the dense term is being farmed\.$/,
        },
      ],
    },
  ],
});
