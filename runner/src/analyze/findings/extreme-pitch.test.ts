import { testFinding } from '../../../test/helpers/finding-tester';
import { extremePitch } from './extreme-pitch';

testFinding(extremePitch, {
  quiet: [{ name: 'walking back and forth with a level view', run: 'back-and-forth', task: 'approach-cow' }],
  finds: [
    {
      name: 'looking at the floor',
      run: 'look-down',
      task: 'approach-pig',
      findings: [
        {
          id: 'extreme-pitch',
          episodeIds: [0, 1, 2, 3, 4, 5],
          message: /^6 failed episodes of 6 \(100 %\) held the pitch beyond ±30° for 16\+ steps \(6 looking down\), 32 steps on average out of the last 32/,
        },
      ],
    },
  ],
});
