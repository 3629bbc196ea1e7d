import { reward, testRule } from '../../../test/helpers/rule-tester';
import { negativeIndex } from './negative-index';

testRule(negativeIndex, {
  valid: [{ name: 'at(-1)', code: reward(`  const last = past_agent_positions.at(-1);\n  return last ? 1 : 0;`) }],
  invalid: [
    {
      name: "Python's last element",
      code: reward(`  const last = past_agent_positions[-1];\n  return last ? 1 : 0;`),
      errors: [{ line: 2, message: /past_agent_positions\[-1\] is undefined in JavaScript/ }],
      output: reward(`  const last = past_agent_positions.at(-1);\n  return last ? 1 : 0;`),
    },
  ],
});
