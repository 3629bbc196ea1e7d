import { reward, testRule } from '../../../test/helpers/rule-tester';
import { nearestEntryUnchecked } from './nearest-entry-unchecked';

testRule(nearestEntryUnchecked, {
  valid: [{ name: 'checked with in', code: reward(`  if ('lava' in current_nearest_blocks && current_nearest_blocks.lava[0] < 3) return -1;\n  return 0;`) }],
  invalid: [
    {
      name: 'read without a check',
      code: reward(`  if (current_nearest_blocks.lava[0] < 3) return -1;\n  return 0;`),
      errors: [{ line: 2, message: /current_nearest_blocks\.lava is absent when no lava is visible/ }],
      output: reward(`  if ('lava' in current_nearest_blocks && current_nearest_blocks.lava[0] < 3) return -1;\n  return 0;`),
    },
  ],
});
