import { reward, testRule } from '../../../test/helpers/rule-tester';
import { rewardContract } from './reward-contract';

testRule(rewardContract, {
  valid: [{ name: 'reward_function with the six parameters', code: reward(`  return 0;`) }],
  invalid: [
    {
      name: 'no reward_function',
      code: `export function reward(current_nearest_blocks) {\n  return 0;\n}\n`,
      errors: [{ line: 1, message: /must export function reward_function\(current_nearest_blocks, previous_nearest_blocks/ }],
    },
  ],
});
