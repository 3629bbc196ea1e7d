import { reward, testRule } from '../../../test/helpers/rule-tester';
import { swappedArguments } from './swapped-arguments';

testRule(swappedArguments, {
  valid: [
    {
      name: 'arguments in parameter order',
      code:
        `function closer(current_nearest_blocks, previous_nearest_blocks) {\n  return 0;\n}\n` +
        reward(`  return closer(current_nearest_blocks, previous_nearest_blocks);`),
    },
  ],
  invalid: [
    {
      name: 'current and previous exchanged',
      code:
        `function closer(current_nearest_blocks, previous_nearest_blocks) {\n  return 0;\n}\n` +
        reward(`  return closer(previous_nearest_blocks, current_nearest_blocks);`),
      errors: [{ line: 5, message: /Arguments of closer\(\) are swapped: previous_nearest_blocks is passed as current_nearest_blocks/ }],
      output:
        `function closer(current_nearest_blocks, previous_nearest_blocks) {\n  return 0;\n}\n` +
        reward(`  return closer(current_nearest_blocks, previous_nearest_blocks);`),
    },
  ],
});
