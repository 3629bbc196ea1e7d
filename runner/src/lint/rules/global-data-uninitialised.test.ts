import { reward, testRule } from '../../../test/helpers/rule-tester';
import { globalDataUninitialised } from './global-data-uninitialised';

testRule(globalDataUninitialised, {
  valid: [{ name: 'initialised with ??=', code: reward(`  GLOBAL_DATA.steps ??= 0;\n  GLOBAL_DATA.steps += 1;\n  return 0;`) }],
  invalid: [
    {
      name: 'a counter updated before it is stored',
      code: reward(`  GLOBAL_DATA.steps += 1;\n  return 0;`),
      errors: [{ line: 2, message: /GLOBAL_DATA\.steps is updated before anything stores it/ }],
      output: reward(`  GLOBAL_DATA.steps ??= 0;\n  GLOBAL_DATA.steps += 1;\n  return 0;`),
    },
  ],
});
