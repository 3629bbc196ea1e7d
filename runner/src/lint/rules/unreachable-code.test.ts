import { pyReward, reward, testRule } from '../../../test/helpers/rule-tester';
import { unreachableCode } from './unreachable-code';

// The paper's printed approach-cow shape: the final combination sits inside `dense`, after its return.
const paperShape = (inside: boolean) =>
  reward(`  function dense(current_nearest_blocks) {
    let dense_reward = 0;
    if ('cow' in current_nearest_blocks) dense_reward = 1;
    return dense_reward;${
      inside
        ? `
    return Math.sign(sparse(health)) * 1 + Math.sign(dense(current_nearest_blocks)) * 0.1;
  }`
        : `
  }
  return Math.sign(sparse(health)) * 1 + Math.sign(dense(current_nearest_blocks)) * 0.1;`
    }
  function sparse(health) {
    return health <= 0 ? -1 : 0;
  }`);

testRule(unreachableCode, {
  valid: [
    { name: 'the combination after the helper', code: paperShape(false) },
    { name: 'a hoisted helper after the return', code: reward(`  return helper();\n  function helper() { return 0; }`) },
    { name: 'early returns in branches', code: reward(`  if (health < 5) return -1;\n  return 0;`) },
  ],
  invalid: [
    {
      name: 'the combination nested in dense after its return',
      code: paperShape(true),
      errors: [{ line: 6, message: /Unreachable: this return in `dense` comes after the `return` on line 5.*reward_function returns undefined/ }],
    },
    { name: 'code after a throw', code: reward(`  throw new Error('todo');\n  return 0;`), errors: [{ line: 3, message: /after the `throw` on line 2/ }] },
  ],
});

testRule(
  unreachableCode,
  {
    valid: [{ name: 'returns in branches', code: pyReward('    if health < 5:\n        return -1\n    return 0') }],
    invalid: [
      {
        name: 'after a return',
        code: pyReward('    return 0\n    GLOBAL_DATA["x"] = 1'),
        errors: [{ line: 3, message: /Unreachable: this comes after a return/ }],
      },
    ],
  },
  'python',
);
