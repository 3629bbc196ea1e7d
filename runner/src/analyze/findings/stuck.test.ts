import { testFinding } from '../../../test/helpers/finding-tester';
import { stuck } from './stuck';

testFinding(stuck, {
  quiet: [{ name: 'walking back and forth is moving', run: 'back-and-forth', task: 'approach-cow' }],
  finds: [
    {
      name: 'spinning on the spot, paid for it',
      run: 'spin-in-place',
      task: 'approach-tree',
      findings: [
        {
          id: 'stuck',
          episodeIds: [0, 1, 2, 3, 4],
          message:
            /^5 failed episodes of 5 \(100 %\) spent most of their time without moving \(100 % of all failed-episode steps\); in 5 of them the reward was still positive while standing still\.$/,
        },
      ],
    },
  ],
});
