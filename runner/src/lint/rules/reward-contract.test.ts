import { pyReward, reward, testRule } from '../../../test/helpers/rule-tester';
import { rewardContract } from './reward-contract';

const CONTRACT = 'current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA';
const ATTACK = `${CONTRACT}, damage_dealt, kill_entity`;
const BODY = `  const now = current_nearest_blocks['oak_log'];
  const before = previous_nearest_blocks['oak_log'];
  if (health <= 0) return -1;
  if (now === undefined || before === undefined) return 0;
  return Math.sign(before[0] - now[0]) * 0.1;
}
`;
const withParams = (params: string, body = BODY) => `// task: approach-tree\nexport function reward_function(${params}) {\n${body}`;

testRule(rewardContract, {
  valid: [
    { name: 'reward_function with the six parameters', code: reward(`  return 0;`) },
    { name: 'the six parameters, some of them unread', code: withParams(CONTRACT) },
    {
      name: 'the eight parameters of an attack task',
      code: `// task: attack-cow\nexport function reward_function(${ATTACK}) {\n  return damage_dealt > 0 ? 1 : 0;\n}\n`,
    },
    {
      name: 'dense and sparse taking leading parts of the list',
      code: `export function dense(current_nearest_blocks, previous_nearest_blocks) {\n  return 0;\n}\nexport function sparse(current_nearest_blocks, previous_nearest_blocks, inventory_change, health) {\n  return health <= 0 ? -1 : 0;\n}\n`,
    },
    { name: 'an arrow reward_function', code: `export const reward_function = (${CONTRACT}) => 0;\n` },
    {
      name: 'a nested helper with its own parameter names (not the contract)',
      code: withParams(CONTRACT, `  function closer(prev_blocks, now_blocks) {\n    return 0;\n  }\n${BODY}`),
    },
  ],
  invalid: [
    {
      name: 'no reward_function',
      code: `export function reward(current_nearest_blocks) {\n  return 0;\n}\n`,
      errors: [{ line: 1, message: /must export function reward_function\(current_nearest_blocks, previous_nearest_blocks/ }],
    },
    {
      name: 'current and previous nearest blocks swapped',
      code: withParams('previous_nearest_blocks, current_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA'),
      errors: [
        {
          line: 2,
          message:
            /^reward_function: parameter 1 is previous_nearest_blocks, but the runtime passes current_nearest_blocks there \(the parameters are swapped\); the runtime passes \(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA\) in this order, by position\.$/,
        },
      ],
      // The uses keep their names, so after the reorder each reads what it says.
      output: withParams(CONTRACT),
    },
    {
      name: 'the swap on a line of its own is reported there',
      code: `// task: approach-tree\nexport function reward_function(\n  current_nearest_blocks,\n  previous_nearest_blocks,\n  health,\n  inventory_change,\n  past_agent_positions,\n  GLOBAL_DATA,\n) {\n${BODY}`,
      errors: [{ line: 5, message: /parameter 3 is health, but the runtime passes inventory_change there/ }],
    },
    {
      name: 'previous_nearest_blocks renamed prev_blocks',
      code: withParams(
        'current_nearest_blocks, prev_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA',
        BODY.replace("previous_nearest_blocks['oak_log']", "prev_blocks['oak_log']").replace('return 0;', 'return { prev_blocks }.prev_blocks ? 0 : 0;'),
      ),
      errors: [{ line: 2, message: /parameter 2 is prev_blocks, but the runtime passes previous_nearest_blocks there; name it previous_nearest_blocks;/ }],
      output: withParams(CONTRACT, BODY.replace('return 0;', 'return { prev_blocks: previous_nearest_blocks }.prev_blocks ? 0 : 0;')),
    },
    {
      name: 'two parameters renamed: one finding each',
      code: withParams(
        'cnb, pnb, inventory_change, health, past_agent_positions, GLOBAL_DATA',
        BODY.replaceAll('current_nearest_blocks', 'cnb').replaceAll('previous_nearest_blocks', 'pnb'),
      ),
      errors: [
        { line: 2, message: /parameter 1 is cnb, but the runtime passes current_nearest_blocks there/ },
        { line: 2, message: /parameter 2 is pnb, but the runtime passes previous_nearest_blocks there/ },
      ],
      output: withParams(
        'current_nearest_blocks, pnb, inventory_change, health, past_agent_positions, GLOBAL_DATA',
        BODY.replaceAll('previous_nearest_blocks', 'pnb'),
      ),
    },
    {
      name: 'inventory_change left out: health receives the inventory changes',
      code: withParams('current_nearest_blocks, previous_nearest_blocks, health, past_agent_positions, GLOBAL_DATA'),
      errors: [{ line: 2, message: /parameter 3 is health, but the runtime passes inventory_change there \(inventory_change is missing\)/ }],
      output: withParams(CONTRACT),
    },
    {
      name: 'the last parameters left out',
      code: withParams('current_nearest_blocks, previous_nearest_blocks, inventory_change, health'),
      errors: [{ line: 2, message: /reward_function: past_agent_positions, GLOBAL_DATA are missing; the runtime passes/ }],
      output: withParams(CONTRACT),
    },
    {
      name: 'an extra parameter',
      code: withParams(`${CONTRACT}, step`),
      errors: [{ line: 2, message: /unexpected parameter 7 step: the runtime passes nothing of that name/ }],
      output: withParams(CONTRACT),
    },
    {
      name: 'dense skipping a parameter: health receives previous_nearest_blocks',
      code: `export function dense(current_nearest_blocks, health) {\n  return health > 5 ? 1 : 0;\n}\nexport function sparse(current_nearest_blocks) {\n  return 0;\n}\n`,
      errors: [
        {
          line: 1,
          message:
            /^dense: parameter 2 is health, but the runtime passes previous_nearest_blocks there \(previous_nearest_blocks, inventory_change are missing\); dense and sparse take a leading part of/,
        },
      ],
      output: `export function dense(current_nearest_blocks, previous_nearest_blocks, inventory_change, health) {\n  return health > 5 ? 1 : 0;\n}\nexport function sparse(current_nearest_blocks) {\n  return 0;\n}\n`,
    },
  ],
});

testRule(
  rewardContract,
  {
    valid: [{ name: 'the paper signature', code: pyReward('    return 0') }],
    invalid: [
      {
        name: 'wrong order',
        code: 'def reward_function(current_nearest_blocks, health):\n    return 0\n',
        errors: [{ line: 1, message: /parameter 2 is "health" but must be "previous_nearest_blocks"/ }],
      },
      {
        name: 'no reward_function',
        code: 'def reward(current_nearest_blocks):\n    return 0\n',
        errors: [{ line: 1, message: /must define reward_function/ }],
      },
    ],
  },
  'python',
);
