import { pyReward, reward, testRule } from '../../../test/helpers/rule-tester';
import { unknownName } from './unknown-name';

testRule(unknownName, {
  valid: [{ name: 'a real block name', code: reward(`  return current_nearest_blocks['oak_log'] ? 1 : 0;`) }],
  invalid: [
    {
      name: 'a made-up block name, renamed to the closest real one',
      code: reward(`  const m = current_nearest_blocks['magma'];\n  return m ? 1 : 0;`),
      errors: [{ line: 2, message: /'magma' is not a Minecraft 1\.16\.5 name.*Did you mean 'lava'/ }],
      output: reward(`  const m = current_nearest_blocks['lava'];\n  return m ? 1 : 0;`),
    },
  ],
});

// Python: the same names, the same fixes (the paper's "magma" for lava).
testRule(
  unknownName,
  {
    valid: [
      { name: 'real names', code: pyReward('    if "lava" in current_nearest_blocks:\n        return -1\n    return inventory_change.get("diamond", 0)') },
    ],
    invalid: [
      {
        name: 'magma for lava',
        code: pyReward('    if "magma" in current_nearest_blocks:\n        return -1\n    return 0'),
        errors: [{ line: 2, message: /'magma' is not a Minecraft 1\.16\.5 name.*Did you mean 'lava'/ }],
        output: pyReward('    if "lava" in current_nearest_blocks:\n        return -1\n    return 0'),
      },
      {
        name: 'wood for a log',
        code: pyReward("    return 1 if 'wood' in current_nearest_blocks else 0"),
        errors: [{ line: 2, message: /'wood' is not a Minecraft.*'oak_log'/ }],
        output: pyReward("    return 1 if 'oak_log' in current_nearest_blocks else 0"),
      },
    ],
  },
  'python',
);
