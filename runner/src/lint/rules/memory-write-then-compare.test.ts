import { reward, testRule } from '../../../test/helpers/rule-tester';
import { memoryWriteThenCompare } from './memory-write-then-compare';

testRule(memoryWriteThenCompare, {
  valid: [
    {
      name: 'compare first, store after',
      code: reward(
        `  let sparse = 0;\n  if (GLOBAL_DATA['health'] !== undefined && health < GLOBAL_DATA['health']) sparse = -1;\n  GLOBAL_DATA['health'] = health;\n  return sparse;`,
      ),
    },
    {
      name: 'a store in another branch',
      code: reward(
        `  if (health > 5) {\n    GLOBAL_DATA['health'] = health;\n  } else if (GLOBAL_DATA['health'] !== undefined && health < GLOBAL_DATA['health']) return -1;\n  return 0;`,
      ),
    },
  ],
  invalid: [
    {
      name: 'store then compare the same key',
      code: reward(`  GLOBAL_DATA['health'] = health;\n  let sparse = 0;\n  if (health < GLOBAL_DATA['health']) sparse = -1;\n  return sparse;`),
      errors: [{ line: 4, message: /GLOBAL_DATA\['health'\] was stored on line 2 .*compares the new value with itself \(always false\)/ }],
    },
    {
      name: 'store then compare through a property',
      code: reward(
        `  const cow = current_nearest_blocks['cow'];\n  if (cow === undefined) return 0;\n  GLOBAL_DATA.closest = cow[0];\n  return cow[0] < GLOBAL_DATA.closest ? 1 : 0;`,
      ),
      errors: [{ line: 5, message: /stored on line 4/ }],
    },
  ],
});
