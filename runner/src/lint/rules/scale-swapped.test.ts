import { pyReward, reward, testRule } from '../../../test/helpers/rule-tester';
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

// Python: the paper's own printed combination, sign(dense) * 1 + sign(sparse) * 0.1.
testRule(
  scaleSwapped,
  {
    valid: [
      {
        name: 'the rule',
        code: `import numpy as np\n${pyReward('    dense_reward = 1\n    sparse_reward = 0\n    return np.sign(sparse_reward) * 1 + np.sign(dense_reward) * 0.1')}`,
      },
    ],
    invalid: [
      {
        name: 'swapped',
        code: `import numpy as np\n${pyReward('    dense_reward = 1\n    sparse_reward = 0\n    return np.sign(dense_reward) * 1 + np.sign(sparse_reward) * 0.1')}`,
        errors: [{ line: 5, message: /weights are swapped: dense is weighted 1 and sparse 0\.1/ }],
        output: `import numpy as np\n${pyReward('    dense_reward = 1\n    sparse_reward = 0\n    return np.sign(dense_reward) * 0.1 + np.sign(sparse_reward) * 1')}`,
      },
    ],
  },
  'python',
);
