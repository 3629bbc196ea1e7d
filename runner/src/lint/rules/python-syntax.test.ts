import { pyReward, testRule } from '../../../test/helpers/rule-tester';
import { pythonSyntax } from './python-syntax';

testRule(
  pythonSyntax,
  {
    valid: [{ name: 'Python 3', code: pyReward('    print("x")\n    return 1 if health != 10 else 0') }],
    invalid: [
      {
        name: 'a print statement',
        code: pyReward('    print "health", health\n    return 0'),
        errors: [{ line: 2, message: /Python 2 print statement/ }],
        output: pyReward('    print("health", health)\n    return 0'),
      },
      {
        name: 'except E, e',
        code: pyReward('    try:\n        return 1\n    except KeyError, e:\n        return 0'),
        errors: [{ line: 4, message: /except E as name/ }],
        output: pyReward('    try:\n        return 1\n    except KeyError as e:\n        return 0'),
      },
      {
        name: 'the <> operator',
        code: pyReward('    return 1 if health <> 10 else 0'),
        errors: [{ line: 2, message: /writes !=/ }],
        output: pyReward('    return 1 if health != 10 else 0'),
      },
      { name: 'a syntax error', code: pyReward('    return (1 +'), errors: [{ line: 2, message: /syntax error/ }] },
    ],
  },
  'python',
);
