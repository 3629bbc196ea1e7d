import { reward, testRule } from '../../../test/helpers/rule-tester';
import { scaleUnscaled } from './scale-unscaled';

testRule(scaleUnscaled, {
  valid: [
    {
      name: "the rule's combination",
      code: `function dense() { return 1; }\nfunction sparse() { return 0; }\n` + reward(`  return Math.sign(sparse()) * 1 + Math.sign(dense()) * 0.1;`),
    },
  ],
  invalid: [
    {
      name: 'a raw sum',
      code: `function dense() { return 1; }\nfunction sparse() { return 0; }\n` + reward(`  return sparse() + dense();`),
      errors: [{ line: 4, message: /combined without Math\.sign/ }],
      output: `function dense() { return 1; }\nfunction sparse() { return 0; }\n` + reward(`  return Math.sign(sparse()) * 1 + Math.sign(dense()) * 0.1;`),
    },
    {
      name: 'signed with other weights',
      code: `function dense() { return 1; }\nfunction sparse() { return 0; }\n` + reward(`  return Math.sign(sparse()) * 2 + Math.sign(dense()) * 0.5;`),
      errors: [{ line: 4, message: /dense is weighted 0\.5 and sparse 2/ }],
    },
  ],
});
