import { reward, testRule } from '../../../test/helpers/rule-tester';
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
