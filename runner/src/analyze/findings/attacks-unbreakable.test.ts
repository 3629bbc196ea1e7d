import { testFinding } from '../../../test/helpers/finding-tester';
import { attacksUnbreakable } from './attacks-unbreakable';

testFinding(attacksUnbreakable, {
  quiet: [
    { name: 'digging sideways at the start height until the pickaxe wears out', run: 'tool-worn-out', task: 'explore-diamond' },
    { name: 'spinning on the ground', run: 'spin-in-place', task: 'approach-tree' },
  ],
  finds: [
    {
      // The scripted lava-seeker digs one block down whenever no lava is in sight: two of its time-outs end on bedrock.
      name: 'shafts dug down to bedrock, attacked to the end',
      run: 'lava-deaths',
      task: 'explore-diamond',
      findings: [
        {
          id: 'attacks-unbreakable',
          episodeIds: [3, 5],
          message:
            /^2 failed episodes of 6 \(33 %\) ended attacking bedrock, which no tool breaks \(minecraft-data 1\.16\.5: not diggable\), a median 7\.5 m below their start height, first reached at a median step 337\.$/,
        },
      ],
    },
  ],
});
