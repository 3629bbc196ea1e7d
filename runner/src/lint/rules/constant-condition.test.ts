import { reward, testRule } from '../../../test/helpers/rule-tester';
import { constantCondition } from './constant-condition';

testRule(constantCondition, {
  valid: [
    {
      name: 'yaw compared in radians',
      code: reward(`  const e = current_nearest_blocks['oak_log'];\n  if (e === undefined) return 0;\n  return e[1] > Math.PI / 2 ? 1 : 0;`),
    },
  ],
  invalid: [
    {
      name: 'yaw compared with degrees',
      code: reward(`  const e = current_nearest_blocks['oak_log'];\n  if (e === undefined) return 0;\n  return e[1] > 90 ? 1 : 0;`),
      errors: [{ line: 4, message: /yaw is -3\.14\.\.3\.14 rad, so `e\[1\] > 90` is always false\. 90 looks like degrees/ }],
      output: reward(`  const e = current_nearest_blocks['oak_log'];\n  if (e === undefined) return 0;\n  return e[1] > (90 * Math.PI / 180) ? 1 : 0;`),
    },
  ],
});
