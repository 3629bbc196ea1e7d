import { reward, testRule } from '../../../test/helpers/rule-tester';
import { unknownName } from './unknown-name';

testRule(unknownName, {
  valid: [{ name: 'a real block name', code: reward(`  return current_nearest_blocks['oak_log'] ? 1 : 0;`) }],
  invalid: [
    {
      name: 'a made-up block name, renamed to the closest real one',
      code: reward(`  const m = current_nearest_blocks['magma'];\n  return m ? 1 : 0;`),
      errors: [{ line: 2, message: /'magma' is not a Minecraft 1\.16\.5 name.*Did you mean 'lava'/ }],
      output: reward(`  const m = current_nearest_blocks['lava'];\n  return m ? 1 : 0;`),
    },
  ],
});
