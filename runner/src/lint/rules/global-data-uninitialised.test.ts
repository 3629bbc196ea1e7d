import { pyReward, reward, testRule } from '../../../test/helpers/rule-tester';
import { globalDataUninitialised } from './global-data-uninitialised';

testRule(globalDataUninitialised, {
  valid: [{ name: 'initialised with ??=', code: reward(`  GLOBAL_DATA.steps ??= 0;\n  GLOBAL_DATA.steps += 1;\n  return 0;`) }],
  invalid: [
    {
      name: 'a counter updated before it is stored',
      code: reward(`  GLOBAL_DATA.steps += 1;\n  return 0;`),
      errors: [{ line: 2, message: /GLOBAL_DATA\.steps is updated before anything stores it/ }],
      output: reward(`  GLOBAL_DATA.steps ??= 0;\n  GLOBAL_DATA.steps += 1;\n  return 0;`),
    },
  ],
});

// Python: the paper's GLOBAL_DATA["health"] before any write (a KeyError on the first step).
testRule(
  globalDataUninitialised,
  {
    valid: [
      {
        name: 'stored first',
        code: pyReward(
          '    if "health" not in GLOBAL_DATA:\n        GLOBAL_DATA["health"] = health\n    lost = health < GLOBAL_DATA["health"]\n    GLOBAL_DATA["health"] = health\n    return -1 if lost else 0',
        ),
      },
      { name: 'setdefault', code: pyReward('    GLOBAL_DATA.setdefault("steps", 0)\n    GLOBAL_DATA["steps"] += 1\n    return 0') },
    ],
    invalid: [
      {
        name: 'read before written',
        code: pyReward('    lost = health < GLOBAL_DATA["health"]\n    GLOBAL_DATA["health"] = health\n    return -1 if lost else 0'),
        errors: [{ line: 2, message: /GLOBAL_DATA\["health"\] is read before anything stores it/ }],
        output: pyReward('    lost = health < GLOBAL_DATA.get("health", 0)\n    GLOBAL_DATA["health"] = health\n    return -1 if lost else 0'),
      },
      {
        name: 'a counter',
        code: pyReward('    GLOBAL_DATA["steps"] += 1\n    return 0'),
        errors: [{ line: 2, message: /is updated before anything stores it/ }],
      },
    ],
  },
  'python',
);
