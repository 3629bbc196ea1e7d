import { reward, testRule } from '../../../test/helpers/rule-tester';
import { firstStepIndex } from './first-step-index';

testRule(firstStepIndex, {
  valid: [
    {
      name: 'an early return on a short history',
      code: reward(
        `  if (past_agent_positions.length < 2) return 0;\n  const prev = past_agent_positions[past_agent_positions.length - 2];\n  return prev[1] > 70 ? 1 : 0;`,
      ),
    },
    {
      name: 'a guard in the condition',
      code: reward(`  return past_agent_positions.length >= 2 && past_agent_positions[past_agent_positions.length - 2][1] > 70 ? 1 : 0;`),
    },
    {
      name: 'the entry checked before use',
      code: reward(`  const prev = past_agent_positions.at(-2);\n  if (prev === undefined) return 0;\n  return prev[1] > 70 ? 1 : 0;`),
    },
    { name: 'optional chaining', code: reward(`  return (past_agent_positions[past_agent_positions.length - 2]?.[1] ?? 0) > 70 ? 1 : 0;`) },
    { name: 'the current position', code: reward(`  const now = past_agent_positions[past_agent_positions.length - 1];\n  return now[1] < 20 ? 1 : 0;`) },
  ],
  invalid: [
    {
      name: 'the previous position read on the first step',
      code: reward(
        `  const prev = past_agent_positions[past_agent_positions.length - 2];\n  const now = past_agent_positions[past_agent_positions.length - 1];\n  return now[1] < prev[1] ? -1 : 0;`,
      ),
      errors: [{ line: 2, message: /undefined on the first step.*length >= 2/ }],
    },
    {
      name: 'destructuring the entry before last',
      code: reward(`  const [x, y, z] = past_agent_positions.at(-3);\n  return y > 70 ? 1 : 0;`),
      errors: [{ line: 2, message: /length >= 3/ }],
    },
    {
      name: 'index 1 read directly',
      code: reward(`  return past_agent_positions[1][1] > 70 ? 1 : 0;`),
      errors: [{ line: 2, message: /undefined on the first step/ }],
    },
  ],
});
