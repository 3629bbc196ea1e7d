import { reward, testRule } from '../../../test/helpers/rule-tester';
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
