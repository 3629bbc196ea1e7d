import { reward, testRule } from '../../../test/helpers/rule-tester';
import { undefinedReturn } from './undefined-return';

testRule(undefinedReturn, {
  valid: [{ name: 'every path returns a number', code: reward(`  if (health < 5) return 0;\n  return 1;`) }],
  invalid: [
    {
      name: 'a bare return',
      code: reward(`  if (health < 5) return;\n  return 1;`),
      errors: [{ line: 2, message: /returns undefined while the function returns numbers elsewhere/ }],
      output: reward(`  if (health < 5) return 0;\n  return 1;`),
    },
  ],
});
