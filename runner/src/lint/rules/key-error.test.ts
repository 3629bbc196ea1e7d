import { pyReward, testRule } from '../../../test/helpers/rule-tester';
import { keyError } from './key-error';

const attack = (body: string) =>
  `def reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA, damage_dealt, kill_entity):\n${body}\n`;

testRule(
  keyError,
  {
    valid: [
      { name: 'read with .get', code: attack('    return kill_entity.get("cow", 0)') },
      { name: 'tested first', code: pyReward('    if "cow" in current_nearest_blocks:\n        return -current_nearest_blocks["cow"][0]\n    return 0') },
    ],
    invalid: [
      {
        name: 'a kill before any kill',
        code: attack('    if kill_entity["cow"] > 0:\n        return 1\n    return 0'),
        errors: [{ line: 2, message: /kill_entity\["cow"\] raises KeyError on every step where no such mob was killed/ }],
        output: attack('    if kill_entity.get("cow", 0) > 0:\n        return 1\n    return 0'),
      },
      {
        name: 'an entry not in view',
        code: pyReward('    return -current_nearest_blocks["cow"][0]'),
        errors: [{ line: 2, message: /test "cow" in current_nearest_blocks first/ }],
      },
    ],
  },
  'python',
);
