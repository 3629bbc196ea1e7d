import { testFinding } from '../../../test/helpers/finding-tester';
import { turningFarmed } from './turning-farmed';

testFinding(turningFarmed, {
  quiet: [{ name: 'walking back and forth turns little', run: 'back-and-forth', task: 'approach-cow' }],
  finds: [
    {
      name: 'spinning on the spot on a "turned towards it" bonus',
      run: 'spin-in-place',
      task: 'approach-tree',
      findings: [{ id: 'turning-farmed', episodeIds: [0, 1, 2, 3, 4], message: /^5 failed episodes of 5 \(100 %\) turned on the spot and were paid for it/ }],
    },
  ],
});
