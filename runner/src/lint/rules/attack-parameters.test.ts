import { testRule } from '../../../test/helpers/rule-tester';
import { attackParameters } from './attack-parameters';

const ATTACK = 'current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA, damage_dealt, kill_entity';

testRule(attackParameters, {
  valid: [
    {
      name: 'attack parameters in an attack task',
      code: `// task: attack-cow\nexport function reward_function(${ATTACK}) {\n  return (kill_entity['cow'] ?? 0) > 0 ? 1 : Math.sign(damage_dealt) * 0.1;\n}\n`,
    },
    {
      name: 'no task header (the task is chosen at training time)',
      code: `export function reward_function(${ATTACK}) {\n  return damage_dealt > 0 ? 1 : 0;\n}\n`,
    },
  ],
  invalid: [
    {
      name: 'attack parameters in an approach task',
      code: `// task: approach-cow\nexport function reward_function(${ATTACK}) {\n  return damage_dealt > 0 ? 1 : 0;\n}\n`,
      errors: [
        { line: 2, message: /damage_dealt exists only in attack tasks.*approach-cow/ },
        { line: 2, message: /kill_entity exists only in attack tasks/ },
      ],
    },
  ],
});
