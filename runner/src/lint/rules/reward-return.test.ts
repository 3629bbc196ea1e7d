import { pyReward, reward, testRule } from '../../../test/helpers/rule-tester';
import { rewardReturn } from './reward-return';

const PARAMS = 'current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA';

testRule(rewardReturn, {
  valid: [
    { name: 'a number on every path', code: reward(`  return health > 5 ? 1 : 0;`) },
    {
      name: 'dense and sparse returning numbers',
      code: `export function dense(current_nearest_blocks) {\n  return 'cow' in current_nearest_blocks ? 1 : 0;\n}\nexport function sparse(current_nearest_blocks, previous_nearest_blocks, inventory_change, health) {\n  return health <= 0 ? -1 : 0;\n}\n`,
    },
    { name: 'a reward that only throws', code: reward(`  throw new Error('not written yet');`) },
  ],
  invalid: [
    {
      name: 'the nested combination leaves reward_function without a return',
      code: reward(
        `  function dense(current_nearest_blocks) {\n    return 'cow' in current_nearest_blocks ? 1 : 0;\n  }\n  const d = dense(current_nearest_blocks);`,
      ),
      errors: [{ line: 1, message: /reward_function never returns a value.*nested helper functions/ }],
    },
    { name: 'a boolean', code: reward(`  return health > 5;`), errors: [{ line: 1, message: /returns a boolean, not a number.*cond \? 1 : 0/ }] },
    { name: 'an object', code: reward(`  return { dense: 1, sparse: 0 };`), errors: [{ line: 1, message: /returns an object, not a number/ }] },
    {
      name: 'an array from sparse',
      code: `export function dense(current_nearest_blocks) {\n  return 1;\n}\nexport function sparse(current_nearest_blocks) {\n  return [0, 1];\n}\n`,
      errors: [{ line: 4, message: /sparse returns an array/ }],
    },
    {
      name: 'an async reward',
      code: `export async function reward_function(${PARAMS}) {\n  return 0;\n}\n`,
      errors: [{ line: 1, message: /is async, so it returns a Promise/ }],
      output: `export function reward_function(${PARAMS}) {\n  return 0;\n}\n`,
    },
  ],
});

testRule(
  rewardReturn,
  {
    valid: [
      {
        name: 'every path returns',
        code: pyReward('    if health > 5:\n        return 1\n    elif health > 2:\n        return 0\n    else:\n        return -1'),
      },
      { name: 'nested helpers return for themselves', code: pyReward('    def dense():\n        return 1\n    return dense()') },
    ],
    invalid: [
      {
        name: 'falls off the end',
        code: pyReward('    if health > 5:\n        return 1.0'),
        errors: [{ line: 1, message: /reward_function can reach its end without a return/ }],
      },
      {
        name: 'a bare return',
        code: pyReward('    if health <= 0:\n        return\n    return 1'),
        errors: [{ line: 3, message: /bare return makes reward_function return None/ }],
      },
      {
        name: 'a bool',
        code: pyReward('    return health > 5'),
        errors: [{ line: 2, message: /returns a bool/ }],
        output: pyReward('    return float(health > 5)'),
      },
    ],
  },
  'python',
);
