import { reward, testRule } from '../../../test/helpers/rule-tester';
import { pythonIsm } from './python-ism';

testRule(pythonIsm, {
  valid: [
    { name: 'a local function named len', code: `function len(x) {\n  return x.length;\n}\n` + reward(`  return len(past_agent_positions) > 3 ? 1 : 0;`) },
  ],
  invalid: [
    {
      name: 'len()',
      code: reward(`  return len(past_agent_positions) > 3 ? 1 : 0;`),
      errors: [{ line: 2, message: /len\(\) is Python; in JavaScript write past_agent_positions\.length/ }],
      output: reward(`  return past_agent_positions.length > 3 ? 1 : 0;`),
    },
    {
      name: 'and / not',
      code: reward(`  if (health > 5 and not GLOBAL_DATA.hurt) return 1;\n  return 0;`),
      errors: [
        { line: 2, message: /'and' is Python; in JavaScript write '&&'/ },
        { line: 2, message: /'not' is Python; in JavaScript write '!'/ },
      ],
      output: reward(`  if (health > 5 && not GLOBAL_DATA.hurt) return 1;\n  return 0;`),
    },
  ],
});
