import { reward, testRule } from '../../../test/helpers/rule-tester';
import { inventoryBlockDrop } from './inventory-block-drop';

testRule(inventoryBlockDrop, {
  valid: [
    { name: 'the dropped item', code: reward(`  return (inventory_change['diamond'] ?? 0) > 0 ? 1 : 0;`) },
    { name: 'a log drops itself', code: reward(`  return 'oak_log' in inventory_change ? 1 : 0;`) },
    { name: 'a block name in the nearest blocks', code: reward(`  return 'diamond_ore' in current_nearest_blocks ? 1 : 0;`) },
  ],
  invalid: [
    {
      name: 'diamond_ore as an inventory key',
      code: reward(`  if ((inventory_change['diamond_ore'] ?? 0) > 0) return 1;\n  return 0;`),
      errors: [{ line: 2, message: /'diamond_ore' never appears in inventory_change: the block drops diamond when mined/ }],
      output: reward(`  if ((inventory_change['diamond'] ?? 0) > 0) return 1;\n  return 0;`),
    },
    {
      name: 'stone gives cobblestone',
      code: reward(`  return 'stone' in inventory_change ? 0.1 : 0;`),
      errors: [{ line: 2, message: /drops cobblestone/ }],
      output: reward(`  return 'cobblestone' in inventory_change ? 0.1 : 0;`),
    },
    {
      name: 'grass_block gives dirt',
      code: reward(`  return inventory_change.hasOwnProperty("grass_block") ? 0.1 : 0;`),
      errors: [{ line: 2, message: /drops dirt/ }],
      output: reward(`  return inventory_change.hasOwnProperty("dirt") ? 0.1 : 0;`),
    },
  ],
});
