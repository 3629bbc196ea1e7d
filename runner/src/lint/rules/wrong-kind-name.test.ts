import { pyReward, reward, testRule } from '../../../test/helpers/rule-tester';
import { wrongKindName } from './wrong-kind-name';

testRule(wrongKindName, {
  valid: [{ name: 'an item in inventory_change', code: reward(`  return (inventory_change['diamond'] ?? 0) > 0 ? 1 : 0;`) }],
  invalid: [
    {
      name: 'an item as a nearest-blocks key',
      code: reward(`  return current_nearest_blocks['diamond'] ? 1 : 0;`),
      errors: [{ line: 2, message: /'diamond' is an item, not a block or mob/ }],
      output: reward(`  return current_nearest_blocks['diamond_ore'] ? 1 : 0;`),
    },
  ],
});

testRule(
  wrongKindName,
  {
    valid: [
      {
        name: 'the ore in view, the item in the inventory',
        code: pyReward('    return inventory_change.get("diamond", 0) + (1 if "diamond_ore" in current_nearest_blocks else 0)'),
      },
    ],
    invalid: [
      {
        name: 'the item diamond as a nearest block',
        code: pyReward('    return 1 if "diamond" in current_nearest_blocks else 0'),
        errors: [{ line: 2, message: /'diamond' is an item, not a block or mob.*'diamond_ore'/ }],
        output: pyReward('    return 1 if "diamond_ore" in current_nearest_blocks else 0'),
      },
    ],
  },
  'python',
);
