import { reward, testRule } from '../../../test/helpers/rule-tester';
import { indexOutOfRange } from './index-out-of-range';

testRule(indexOutOfRange, {
  valid: [{ name: 'pitch is index 2', code: reward(`  const e = current_nearest_blocks['oak_log'];\n  if (e === undefined) return 0;\n  return e[2];`) }],
  invalid: [
    {
      name: 'a fourth element of a nearest entry',
      code: reward(`  const e = current_nearest_blocks['oak_log'];\n  if (e === undefined) return 0;\n  return e[3];`),
      errors: [{ line: 4, message: /exactly 3 elements \[distance, yaw, pitch\]: index 3/ }],
    },
  ],
});
