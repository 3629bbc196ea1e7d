import { testFinding } from '../../../test/helpers/finding-tester';
import { resolveTask, type TaskSpec } from '../../tasks';
import { rewardMisaligned } from './reward-misaligned';

/** A task whose success counts any of three farm animals, all of which plains hold. */
const FARM_ANIMAL: TaskSpec = {
  ...resolveTask('approach-cow'),
  id: 'approach-farm-animal',
  success: { kind: 'near', names: ['cow', 'pig', 'sheep'], distance: 2 },
};

testFinding(rewardMisaligned, {
  quiet: [{ name: 'a cow reward on the approach-cow task', run: 'back-and-forth', task: 'approach-cow', rewardNames: ['cow'] }],
  finds: [
    {
      name: 'a cow reward on a task that counts pigs and sheep too',
      run: 'back-and-forth',
      task: FARM_ANIMAL,
      rewardNames: ['cow'],
      findings: [
        {
          id: 'reward-misaligned',
          episodeIds: [0, 3],
          message:
            /^The task's success counts cow, pig, sheep .*, but the reward reads only cow: pig, sheep are invisible to it\. In 2 failed episodes of 6 \(33 %\) the nearest target in view was one the reward ignores\.$/,
        },
      ],
    },
    {
      name: 'a reward that reads none of the targets: no read to widen',
      run: 'back-and-forth',
      task: 'approach-cow',
      rewardNames: ['pig'],
      findings: [{ id: 'reward-misaligned', episodeIds: [1, 2, 4, 5], message: /but the reward reads only none of them: cow is invisible to it/ }],
    },
  ],
});
