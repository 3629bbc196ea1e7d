import { reward, testRule } from '../../../test/helpers/rule-tester';
import { unitMismatch } from './unit-mismatch';

testRule(unitMismatch, {
  valid: [
    {
      name: 'position pitch in degrees',
      code: reward(`  const pitch = past_agent_positions[past_agent_positions.length - 1][4];\n  return Math.abs(pitch) > 45 ? -1 : 0;`),
    },
    {
      name: 'nearest yaw in radians',
      code: reward(`  const cow = current_nearest_blocks['cow'];\n  if (cow === undefined) return 0;\n  return Math.abs(cow[1]) < Math.PI / 6 ? 1 : 0;`),
    },
    {
      name: 'radians converted to degrees',
      code: reward(
        `  const [, , , yaw] = past_agent_positions[past_agent_positions.length - 1];\n  return Math.abs(yaw) > Math.PI / 4 * 180 / Math.PI ? -1 : 0;`,
      ),
    },
  ],
  invalid: [
    {
      name: "a position's pitch against Math.PI / 4",
      code: reward(`  const now = past_agent_positions[past_agent_positions.length - 1];\n  if (now[4] > Math.PI / 4) return -1;\n  return 0;`),
      errors: [{ line: 3, message: /pitch from past_agent_positions is in degrees .* Math\.PI \/ 4 is in radians/ }],
      output: reward(
        `  const now = past_agent_positions[past_agent_positions.length - 1];\n  if (now[4] > (Math.PI / 4) * 180 / Math.PI) return -1;\n  return 0;`,
      ),
    },
  ],
});
