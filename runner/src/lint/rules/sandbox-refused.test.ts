import { pyReward, testRule } from '../../../test/helpers/rule-tester';
import { sandboxRefused } from './sandbox-refused';

testRule(
  sandboxRefused,
  {
    valid: [
      {
        name: 'math, numpy and typing',
        code: `import math\nimport numpy as np\nfrom typing import Dict\n${pyReward('    return np.sign(math.sqrt(health))')}`,
      },
    ],
    invalid: [
      { name: 'import os', code: `import os\n${pyReward('    return 0')}`, errors: [{ line: 1, message: /no module "os"/ }] },
      { name: 'import js', code: `from js import fetch\n${pyReward('    return 0')}`, errors: [{ line: 1, message: /no module "js"/ }] },
      { name: '__import__', code: pyReward('    return __import__("os").getpid()'), errors: [{ line: 2, message: /name __import__/ }] },
      {
        name: 'the subclasses escape',
        code: pyReward('    return len(().__class__.__base__.__subclasses__())'),
        errors: [
          { line: 2, message: /\.__class__/ },
          { line: 2, message: /\.__base__/ },
          { line: 2, message: /\.__subclasses__/ },
        ],
      },
      { name: 'a frame', code: pyReward('    g = (x for x in [])\n    return g.gi_frame'), errors: [{ line: 3, message: /\.gi_frame/ }] },
    ],
  },
  'python',
);
