import { testFinding } from '../../../test/helpers/finding-tester';
import { rewardSign } from './reward-sign';

testFinding(rewardSign, {
  quiet: [{ name: 'a reward that pays and costs', run: 'spin-in-place', task: 'approach-tree' }],
  finds: [
    {
      name: 'a sparse reward on a random walk',
      run: 'sparse-random',
      task: 'approach-cow',
      findings: [
        {
          id: 'reward-never-positive',
          episodeIds: [0, 1, 2, 3, 4, 5],
          message: /^The reward was never positive in 192 recorded steps of 6 episodes \(values seen: 0\): it was 0 throughout/,
        },
      ],
    },
    {
      name: 'a reward that pays for being alive',
      run: 'alive-bonus',
      task: 'approach-sheep',
      findings: [
        {
          id: 'reward-always-positive',
          episodeIds: [0, 1, 2, 3],
          message: /^The reward was positive on every one of 128 recorded steps of 4 episodes \(values seen: 0\.1\)/,
        },
      ],
    },
  ],
});
