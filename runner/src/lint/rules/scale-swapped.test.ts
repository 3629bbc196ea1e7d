import { reward, testRule } from '../../../test/helpers/rule-tester';
import { scaleSwapped } from './scale-swapped';

testRule(scaleSwapped, {
  valid: [
    {
      name: "the rule's weights",
      code: `function dense() { return 1; }\nfunction sparse() { return 0; }\n` + reward(`  return Math.sign(sparse()) * 1 + Math.sign(dense()) * 0.1;`),
    },
  ],
  invalid: [
    {
      name: 'dense weighted 1, sparse 0.1',
      code: `function dense() { return 1; }\nfunction sparse() { return 0; }\n` + reward(`  return Math.sign(sparse()) * 0.1 + Math.sign(dense()) * 1;`),
      errors: [{ line: 4, message: /The weights are swapped: dense is weighted 1 and sparse 0\.1/ }],
      output: `function dense() { return 1; }\nfunction sparse() { return 0; }\n` + reward(`  return Math.sign(sparse()) * 1 + Math.sign(dense()) * 0.1;`),
    },
  ],
});
