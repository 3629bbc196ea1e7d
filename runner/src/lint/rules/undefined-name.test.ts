import { pyReward, testRule } from '../../../test/helpers/rule-tester';
import { undefinedName } from './undefined-name';

const body = (line: string) => pyReward(`    d = current_nearest_blocks.get("cow")\n${line}`);

testRule(
  undefinedName,
  {
    valid: [
      { name: 'np imported', code: `import numpy as np\n${body('    return np.sign(health)')}` },
      {
        name: 'locals, loops, comprehensions, lambdas, except-as',
        code: pyReward(
          '    total = 0\n    for name, (dist, yaw, pitch) in current_nearest_blocks.items():\n        total += dist\n    xs = [p[0] for p in past_agent_positions]\n    f = lambda v: v * 2\n    try:\n        y = f(total)\n    except ValueError as err:\n        y = len(str(err))\n    return y + len(xs)',
        ),
      },
    ],
    invalid: [
      {
        name: 'np without an import',
        code: `# reward\n${body('    return np.sign(health)')}`,
        errors: [{ line: 4, message: /'np' is not defined.*numpy shim/ }],
        output: `# reward\nimport numpy as np\n${body('    return np.sign(health)')}`,
      },
      { name: 'open', code: body('    return len(open("/etc/passwd").read())'), errors: [{ line: 3, message: /'open' is not defined.*no file system/ }] },
      { name: 'a typo', code: body('    return helth'), errors: [{ line: 3, message: /'helth' is not defined/ }] },
    ],
  },
  'python',
);
